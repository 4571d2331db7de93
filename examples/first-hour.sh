#!/usr/bin/env bash
# A project and an OIDC application in it, made with the admin's PAT over REST; prints the client's
# credentials as CLIENT_ID=... and CLIENT_SECRET=... (the secret is shown this once).
set -euo pipefail
BASE_URL=${BASE_URL:-http://localhost:8080}
PAT=${PAT:-$(cat .data/admin.pat)}
REDIRECT_URI=${REDIRECT_URI:-http://localhost:3000/callback}
PROJECT_NAME=${PROJECT_NAME:-My project}  # unique in the organisation: 409 when it exists

project=$(curl -sS --fail-with-body -X POST "$BASE_URL/resources/v3alpha/projects" \
  -H "Authorization: Bearer $PAT" -H 'content-type: application/json' \
  -d "$(jq -n --arg name "$PROJECT_NAME" '{name: $name}')") || { echo "$project" >&2; exit 1; }
PROJECT_ID=$(jq -r .details.id <<<"$project")

# A confidential web application: authorization code (with PKCE) and refresh tokens, the client secret sent
# with HTTP Basic. devMode allows the http:// redirect URI of a local app (https only without it).
application=$(jq -n --arg uri "$REDIRECT_URI" '{name: "My app", oidc: {
  redirectUris: [$uri],
  responseTypes: ["OIDC_RESPONSE_TYPE_CODE"],
  grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN"],
  appType: "OIDC_APP_TYPE_WEB",
  authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  devMode: true}}')
app=$(curl -sS --fail-with-body -X POST "$BASE_URL/resources/v3alpha/projects/$PROJECT_ID/applications" \
  -H "Authorization: Bearer $PAT" -H 'content-type: application/json' \
  -d "$application") || { echo "$app" >&2; exit 1; }

echo "PROJECT_ID=$PROJECT_ID"
echo "CLIENT_ID=$(jq -r .clientId <<<"$app")"
echo "CLIENT_SECRET=$(jq -r .clientSecret <<<"$app")"
