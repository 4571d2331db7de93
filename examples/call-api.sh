#!/usr/bin/env bash
# One API call made three ways with the signed-in user's access token: REST, Connect and gRPC. Any
# authenticated caller may read the password rules (an app's sign-up form shows them); other calls need the
# user's memberships (roles), as with a PAT.
set -euo pipefail
BASE_URL=${BASE_URL:-http://localhost:8080}
: "${ACCESS_TOKEN:?}"
BUF=${BUF:-buf}  # https://buf.build/docs/installation; in this repository node_modules/@bufbuild/buf-linux-x64/bin/buf

# REST: the HTTP mapping of each RPC (see /docs)
curl -sS --fail-with-body -H "Authorization: Bearer $ACCESS_TOKEN" "$BASE_URL/settings/v3alpha/password_complexity"
echo
# Connect: POST /<package>.<Service>/<Method> with the request message as JSON
curl -sS --fail-with-body -H "Authorization: Bearer $ACCESS_TOKEN" -H 'content-type: application/json' -d '{}' \
  "$BASE_URL/svc.settings.login.v3alpha.LoginSettingsService/ResolvePasswordComplexitySettings"
echo
# gRPC over HTTP/2 without TLS (h2c); buf curl learns the schema through server reflection
"$BUF" curl --protocol grpc --http2-prior-knowledge -H "Authorization: Bearer $ACCESS_TOKEN" \
  "$BASE_URL/svc.settings.login.v3alpha.LoginSettingsService/ResolvePasswordComplexitySettings"
