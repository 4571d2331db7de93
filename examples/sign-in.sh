#!/usr/bin/env bash
# The same sign-in with curl only: the authorization URL with PKCE (open it in a browser), then the code
# exchange and userinfo. CLIENT_ID and CLIENT_SECRET from first-hour.sh; the URL the browser is sent back to
# after the sign-in is read from stdin.
set -euo pipefail
BASE_URL=${BASE_URL:-http://localhost:8080}
REDIRECT_URI=${REDIRECT_URI:-http://localhost:3000/callback}
: "${CLIENT_ID:?} ${CLIENT_SECRET:?}"

verifier=$(openssl rand -hex 32)
challenge=$(printf %s "$verifier" | openssl dgst -sha256 -binary | openssl base64 -A | tr '+/' '-_' | tr -d '=')
state=$(openssl rand -hex 16)
query=$(jq -rn --arg c "$CLIENT_ID" --arg r "$REDIRECT_URI" --arg ch "$challenge" --arg s "$state" \
  '{client_id: $c, redirect_uri: $r, response_type: "code", scope: "openid profile email urn:svc:iam:org:project:id:svc:aud",
    code_challenge: $ch, code_challenge_method: "S256", state: $s} | to_entries | map("\(.key)=\(.value | @uri)") | join("&")')
echo "Open this URL in a browser and sign in:"
echo "$BASE_URL/oauth/v2/authorize?$query"

read -rp "The URL you were sent back to: " callback
[[ $callback == *"state=$state"* ]] || { echo "state does not match" >&2; exit 1; }
code=$(sed -E 's/.*[?&]code=([^&#]*).*/\1/' <<<"$callback")
tokens=$(curl -sS --fail-with-body -u "$CLIENT_ID:$CLIENT_SECRET" "$BASE_URL/oauth/v2/token" \
  -d grant_type=authorization_code -d "code=$code" -d "code_verifier=$verifier" --data-urlencode "redirect_uri=$REDIRECT_URI")
ACCESS_TOKEN=$(jq -r .access_token <<<"$tokens")
curl -sS --fail-with-body -H "Authorization: Bearer $ACCESS_TOKEN" "$BASE_URL/oidc/v1/userinfo"
echo
echo "ACCESS_TOKEN=$ACCESS_TOKEN"
