// The endpoints of the OpenAPI document that no RPC describes, written by hand from their handlers: the older
// export/import and user import (src/api/portability), the OpenID Connect provider (src/oidc/routes.ts, under the
// paths of src/oidc/context.ts), health and metrics (src/server/app.ts, src/server/observe.ts).
import { paths as oauth } from "../oidc/context.js";

type Schema = Record<string, unknown>;

const PORTABILITY = "Export and import";
const OIDC = "OpenID Connect and OAuth 2.0";
const OPERATIONS = "Operations";

export const otherTags = [
  {
    name: PORTABILITY,
    description:
      "The older admin and management endpoints kept for moving data between servers: JSON over HTTP only (no gRPC or Connect), " +
      "snake_case or camelCase field names alike. Request bodies up to 32 MiB; larger data goes through a file or object storage.",
  },
  {
    name: OIDC,
    description:
      "The OpenID Connect provider of each instance: its issuer is the scheme and host the request reached. " +
      "The discovery document lists what each endpoint supports (grant types, client authentication methods, scopes, claims).",
  },
  { name: OPERATIONS, description: "Probes and metrics for the platform that runs the server; no authentication." },
];

const bearer = [{ bearer: [] }];
const errorResponse = { description: "Error", content: { "application/json": { schema: { $ref: "#/components/schemas/Status" } } } };
const oauthError = {
  description: "An OAuth 2.0 error (RFC 6749 §5.2)",
  content: {
    "application/json": {
      schema: {
        type: "object",
        properties: {
          error: { type: "string", description: "The error code, e.g. `invalid_request`, `invalid_client`, `invalid_grant`." },
          error_description: { type: "string", description: "What went wrong, for people." },
        },
      },
      example: { error: "invalid_grant", error_description: "the authorization code is invalid or expired" },
    },
  },
};

const str = (description: string, extra: Schema = {}): Schema => ({ type: "string", description, ...extra });
const bool = (description: string): Schema => ({ type: "boolean", description });
const obj = (description: string, properties: Record<string, Schema>, extra: Schema = {}): Schema => ({ type: "object", description, properties, ...extra });
const list = (description: string, items: Schema): Schema => ({ type: "array", description, items });

const local = obj("A file under the instance's directory of SVC_EXPORT_DIR (`<dir>/<instance ID>/`).", {
  path: str("The file's path relative to that directory; `..` may not lead out of it."),
});
const s3 = obj("An object in S3-compatible storage (the endpoint may not be an address SVC_TARGET_DENY denies).", {
  path: str("The object's key."),
  endpoint: str("The storage's host (and port)."),
  access_key_id: str("The access key ID."),
  secret_access_key: str("The secret access key."),
  ssl: bool("true: HTTPS to the endpoint."),
  bucket: str("The bucket."),
});
const gcs = obj("An object in Google Cloud Storage.", {
  path: str("The object's name."),
  bucket: str("The bucket."),
  serviceaccount_json: str("The service account's key file (JSON), base64-encoded."),
});
const timeout = str('How long the call may take, as a duration such as "30m", "90s" or "1h30m" (more than 0, at most 24h; default 30m).', {
  example: "30m",
});
const dataOrgs = obj(
  "The data: `orgs`, a list of organisations with their domains, users, projects, roles, applications, grants, memberships and " +
    "identity providers, as the export writes it.",
  { orgs: list("The organisations.", { type: "object", description: "One organisation (ZITADEL's DataOrg)." }) },
);
const objectDetails = obj("What the change wrote.", {
  sequence: str("The sequence of the event it wrote.", { format: "int64" }),
  changeDate: str("When.", { format: "date-time" }),
  resourceOwner: str("The organisation the user belongs to."),
});

const json = (schema: Schema, example?: unknown) => ({ "application/json": { schema, ...(example === undefined ? {} : { example }) } });
const form = (schema: Schema, example?: unknown) => ({ "application/x-www-form-urlencoded": { schema, ...(example === undefined ? {} : { example }) } });

const portabilityPaths = {
  "/admin/v1/export": {
    post: {
      operationId: "AdminService_ExportData",
      tags: [PORTABILITY],
      summary: "ExportData",
      description:
        'Exports the organisations of the instance (the one of the Host header) as `{"orgs": [...]}`: into a file or object storage ' +
        "when an output is given, else (or with `response_output` too) in the response. Client secrets, keys, personal access tokens and " +
        "signing keys are never exported; password hashes and TOTP secrets only when asked for.\n\nPermission: `iam.export` in the instance.",
      requestBody: {
        required: true,
        content: json(
          obj("What to export and where to.", {
            org_ids: list("Only these organisations (empty: all).", { type: "string" }),
            excluded_org_ids: list("Not these organisations.", { type: "string" }),
            with_passwords: bool("true: the users' password hashes too."),
            with_otp: bool("true: the users' TOTP secrets too."),
            response_output: bool("true: the data in the response as well when an output is given."),
            timeout,
            local_output: local,
            s3_output: s3,
            gcs_output: gcs,
          }),
          { org_ids: ["312909075212468632"], with_passwords: true, with_otp: false, timeout: "30m", local_output: { path: "export.json" } },
        ),
      },
      responses: {
        "200": { description: "The export, or `{}` when it went to an output only", content: json(dataOrgs) },
        default: errorResponse,
      },
      security: bearer,
    },
  },
  "/admin/v1/import": {
    post: {
      operationId: "AdminService_ImportData",
      tags: [PORTABILITY],
      summary: "ImportData",
      description:
        "Imports organisations into the instance: from the body (`data_orgs`, or `data_orgsv1`, the older format) or from a file or " +
        "object storage; exactly one of them. An item that cannot be imported is reported in `errors` and the rest goes on; an item " +
        "already imported is left as it is, so a timeout (DEADLINE_EXCEEDED, with what was done) is followed by the same import again.\n\nPermission: `iam.import` in the instance.",
      requestBody: {
        required: true,
        content: json(
          obj("The data, inline or where to read it.", {
            timeout,
            data_orgs: dataOrgs,
            data_orgsv1: obj("The data in the older format (v1).", { orgs: list("The organisations.", { type: "object", description: "One organisation." }) }),
            data_orgs_local: local,
            data_orgsv1_local: local,
            data_orgs_s3: s3,
            data_orgsv1_s3: s3,
            data_orgs_gcs: gcs,
            data_orgsv1_gcs: gcs,
          }),
          { timeout: "30m", data_orgs: { orgs: [{ orgId: "312909075212468632", org: { name: "ACME" }, humanUsers: [] }] } },
        ),
      },
      responses: {
        "200": {
          description: "What was imported and what was not",
          content: json(
            obj("The import's result.", {
              errors: list(
                "What could not be imported, and why.",
                obj("One item that failed.", { type: str("What kind of item."), id: str("Its ID."), message: str("Why it failed.") }),
              ),
              success: obj("What was imported.", { orgs: list("Per organisation, the IDs imported.", { type: "object", description: "One organisation." }) }),
            }),
          ),
        },
        default: errorResponse,
      },
      security: bearer,
    },
  },
  "/management/v1/users/human/_import": {
    post: {
      operationId: "ManagementService_ImportHumanUser",
      tags: [PORTABILITY],
      summary: "ImportHumanUser",
      description:
        "Imports one human user with a hashed (or plain) password, a TOTP secret and the password-change flag into the organisation " +
        "of the `x-svc-orgid` header (default: the caller's). An unverified e-mail address or no password: the user gets the " +
        "initialisation mail.\n\nPermission: `user.import` in that organisation.",
      parameters: [{ name: "x-svc-orgid", in: "header", description: "The organisation to import into (default: the caller's).", schema: { type: "string" } }],
      requestBody: {
        required: true,
        content: json(
          obj("The user.", {
            user_name: str("The login name."),
            profile: obj("The user's names and language.", {
              first_name: str("Given name."),
              last_name: str("Family name."),
              nick_name: str("Nickname."),
              display_name: str("The name shown."),
              preferred_language: str("A language tag, e.g. `en`."),
            }),
            email: obj("The e-mail address.", { email: str("The address."), is_email_verified: bool("true: already verified (no verification mail).") }),
            phone: obj("The phone number.", { phone: str("The number."), is_phone_verified: bool("true: already verified.") }),
            password: str("A plain password, checked against the organisation's password rules."),
            hashed_password: obj("A password hash instead: bcrypt (`$2a$`, `$2b$`, `$2y$`), `$argon2id$`, `$argon2i$`, `$scrypt$` or `$pbkdf2[-sha…]$`.", {
              value: str("The hash."),
            }),
            password_change_required: bool("true: the user must change the password at the next sign-in."),
            otp_code: str("A TOTP secret (base32) to register as the user's authenticator."),
            idps: list(
              "Links to external identity providers.",
              obj("One link.", {
                config_id: str("The identity provider's ID."),
                external_user_id: str("The user's ID at the provider."),
                display_name: str("The name the provider shows."),
              }),
            ),
          }),
          {
            user_name: "ada",
            profile: { first_name: "Ada", last_name: "Lovelace", preferred_language: "en" },
            email: { email: "ada@example.com", is_email_verified: true },
            hashed_password: { value: "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy" },
            password_change_required: false,
          },
        ),
      },
      responses: {
        "200": { description: "The user's ID", content: json(obj("The imported user.", { userId: str("The new user's ID."), details: objectDetails })) },
        default: errorResponse,
      },
      security: bearer,
    },
  },
};

const clientAuth =
  "The client authenticates as its application is configured: HTTP Basic (`client_secret_basic`), `client_secret_post`, a signed " +
  "JWT (`private_key_jwt`), or only its `client_id` (`none`, public clients).";

const oidcPaths = {
  [oauth.discovery]: {
    get: {
      operationId: "OIDC_Discovery",
      tags: [OIDC],
      summary: "Discovery",
      description: "The provider's metadata (OpenID Connect Discovery 1.0): the issuer, every endpoint's URL, and what each supports.",
      responses: {
        "200": {
          description: "The metadata",
          content: json(
            obj(
              "OpenID Provider Metadata.",
              {
                issuer: str("The issuer: the scheme and host of the request."),
                authorization_endpoint: str("The authorization endpoint's URL."),
                token_endpoint: str("The token endpoint's URL."),
                userinfo_endpoint: str("The userinfo endpoint's URL."),
                jwks_uri: str("The URL of the signing keys (JWKS)."),
              },
              { additionalProperties: true },
            ),
          ),
        },
        "404": { description: "No instance is served at this host" },
      },
    },
  },
  [oauth.authorize]: {
    get: {
      operationId: "OIDC_Authorize",
      tags: [OIDC],
      summary: "Authorize",
      description:
        "Starts a sign-in (OAuth 2.0 §4.1, OpenID Connect Core §3): a browser endpoint that answers with pages and redirects, not JSON. " +
        "It sends the user to the login UI, then back to the client's redirect URI with a code (or tokens) or an error. " +
        "Also POST, with the same parameters as a form.",
      parameters: [
        { name: "client_id", in: "query", required: true, description: "The application's client ID.", schema: { type: "string" } },
        { name: "redirect_uri", in: "query", required: true, description: "One of the application's redirect URIs.", schema: { type: "string" } },
        { name: "response_type", in: "query", required: true, description: "`code` for the authorization code flow.", schema: { type: "string" } },
        { name: "scope", in: "query", required: true, description: "Space-separated scopes, `openid` among them.", schema: { type: "string" } },
        { name: "state", in: "query", description: "Returned to the client unchanged.", schema: { type: "string" } },
        { name: "nonce", in: "query", description: "Put into the ID token unchanged.", schema: { type: "string" } },
        { name: "code_challenge", in: "query", description: "PKCE (RFC 7636): the S256 challenge; required of public clients.", schema: { type: "string" } },
        { name: "code_challenge_method", in: "query", description: "PKCE: `S256`.", schema: { type: "string" } },
        { name: "prompt", in: "query", description: "`login`, `consent`, `select_account` or `none`.", schema: { type: "string" } },
        { name: "login_hint", in: "query", description: "The login name to propose.", schema: { type: "string" } },
        { name: "ui_locales", in: "query", description: "The languages of the login UI, in order of preference.", schema: { type: "string" } },
        { name: "response_mode", in: "query", description: "`query`, `fragment` or `form_post`.", schema: { type: "string" } },
      ],
      responses: { "302": { description: "To the login UI, or back to the client's redirect URI" }, "400": { description: "An error page" } },
    },
  },
  [oauth.token]: {
    post: {
      operationId: "OIDC_Token",
      tags: [OIDC],
      summary: "Token",
      description:
        "Exchanges a grant for tokens (OAuth 2.0 §3.2): an authorization code, a refresh token, client credentials, a JWT bearer " +
        `assertion (RFC 7523) or a token exchange (RFC 8693), as the application allows. ${clientAuth}`,
      requestBody: {
        required: true,
        content: form(
          obj("The grant, form-encoded.", {
            grant_type: str(
              "`authorization_code`, `refresh_token`, `client_credentials`, `urn:ietf:params:oauth:grant-type:jwt-bearer` or " +
                "`urn:ietf:params:oauth:grant-type:token-exchange`.",
            ),
            code: str("The authorization code (`authorization_code`)."),
            redirect_uri: str("The redirect URI of the authorization request (`authorization_code`)."),
            code_verifier: str("PKCE: the verifier of the authorization request's challenge."),
            refresh_token: str("The refresh token (`refresh_token`)."),
            scope: str("Space-separated scopes (client credentials, refresh token: at most those granted)."),
            client_id: str("The client ID, when the client does not authenticate with HTTP Basic."),
            client_secret: str("The client secret (`client_secret_post`)."),
          }),
          { grant_type: "authorization_code", code: "string", redirect_uri: "https://app.example.com/callback", code_verifier: "string", client_id: "string" },
        ),
      },
      responses: {
        "200": {
          description: "The tokens",
          content: json(
            obj("The token response (OAuth 2.0 §5.1).", {
              access_token: str("The access token."),
              token_type: str("`Bearer`."),
              expires_in: { type: "integer", description: "Seconds until the access token expires." },
              refresh_token: str("A refresh token, when the grant and the scope `offline_access` give one."),
              id_token: str("The ID token (a JWT), with the scope `openid`."),
              scope: str("The scopes granted."),
            }),
          ),
        },
        "400": oauthError,
        "401": oauthError,
      },
    },
  },
  [oauth.introspect]: {
    post: {
      operationId: "OIDC_Introspect",
      tags: [OIDC],
      summary: "Introspect",
      description:
        "Whether a token is active, and its claims (RFC 7662). The caller authenticates as a client (HTTP Basic or `private_key_jwt`), " +
        "typically an API application; only tokens meant for it are active.",
      requestBody: {
        required: true,
        content: form(obj("The token, form-encoded.", { token: str("The token."), token_type_hint: str("`access_token` or `refresh_token`.") }), {
          token: "string",
          token_type_hint: "access_token",
        }),
      },
      responses: {
        "200": {
          description: "The token's state",
          content: json(
            obj(
              "The introspection response (RFC 7662 §2.2).",
              {
                active: bool("true: the token is valid and meant for the caller."),
                sub: str("The user's ID."),
                client_id: str("The client the token was issued to."),
                scope: str("The token's scopes."),
                exp: { type: "integer", description: "When it expires (seconds since the epoch)." },
              },
              { additionalProperties: true },
            ),
          ),
        },
        "401": oauthError,
      },
    },
  },
  [oauth.userinfo]: {
    get: {
      operationId: "OIDC_Userinfo",
      tags: [OIDC],
      summary: "Userinfo",
      description: "The claims about the user of an access token, as its scopes allow (OpenID Connect Core §5.3). Also POST.",
      responses: {
        "200": {
          description: "The claims",
          content: json(obj("The user's claims.", { sub: str("The user's ID.") }, { additionalProperties: true }), {
            sub: "312909075212468632",
            email: "ada@example.com",
            email_verified: true,
          }),
        },
        "401": oauthError,
      },
      security: bearer,
    },
  },
  [oauth.revoke]: {
    post: {
      operationId: "OIDC_Revoke",
      tags: [OIDC],
      summary: "Revoke",
      description:
        "Revokes an access token, or a refresh token with its access tokens (RFC 7009). A token that is unknown, invalid or already " +
        `revoked succeeds too; only a token of another client is refused. ${clientAuth}`,
      requestBody: {
        required: true,
        content: form(obj("The token, form-encoded.", { token: str("The token."), token_type_hint: str("`access_token` or `refresh_token`.") }), {
          token: "string",
          token_type_hint: "refresh_token",
        }),
      },
      responses: { "200": { description: "Revoked (or unknown)" }, "400": oauthError, "401": oauthError },
    },
  },
  [oauth.endSession]: {
    get: {
      operationId: "OIDC_EndSession",
      tags: [OIDC],
      summary: "End session",
      description:
        "Signs the user out (OpenID Connect RP-Initiated Logout 1.0): a browser endpoint that ends the session and redirects to one " +
        "of the client's post-logout redirect URIs, or shows a page. Also POST, with the same parameters as a form.",
      parameters: [
        { name: "id_token_hint", in: "query", description: "An ID token the provider issued to the client.", schema: { type: "string" } },
        { name: "client_id", in: "query", description: "The client, when there is no ID token hint.", schema: { type: "string" } },
        { name: "post_logout_redirect_uri", in: "query", description: "One of the client's post-logout redirect URIs.", schema: { type: "string" } },
        { name: "state", in: "query", description: "Returned with the redirect unchanged.", schema: { type: "string" } },
        { name: "ui_locales", in: "query", description: "The languages of the page.", schema: { type: "string" } },
      ],
      responses: { "302": { description: "To the post-logout redirect URI" }, "200": { description: "A page: signed out, or asking to confirm" } },
    },
  },
  [oauth.keys]: {
    get: {
      operationId: "OIDC_Keys",
      tags: [OIDC],
      summary: "Keys",
      description: "The public keys the instance signs tokens with (a JWK Set, RFC 7517): every key until the last token it signed has expired.",
      responses: {
        "200": {
          description: "The JWK Set",
          content: json(obj("A JWK Set.", { keys: list("The keys.", { type: "object", description: "One public key (a JWK)." }) })),
        },
      },
    },
  },
};

const operationsPaths = {
  "/healthz": {
    get: {
      operationId: "Healthz",
      tags: [OPERATIONS],
      summary: "Liveness",
      description: "Answers while the process serves HTTP, whatever the database's state.",
      responses: { "200": { description: "Alive", content: json(obj("The state.", { status: str("`ok`.") }), { status: "ok" }) } },
    },
  },
  "/readyz": {
    get: {
      operationId: "Readyz",
      tags: [OPERATIONS],
      summary: "Readiness",
      description: "Whether the server can serve requests: the database answers and its secrets can be opened.",
      responses: {
        "200": { description: "Ready", content: json(obj("The state.", { status: str("`ready`.") }), { status: "ready" }) },
        "503": {
          description: "Not ready",
          content: json(obj("The state and why.", { status: str("`unavailable`."), reason: str("Why, for people.") })),
        },
      },
    },
  },
  "/metrics": {
    get: {
      operationId: "Metrics",
      tags: [OPERATIONS],
      summary: "Metrics",
      description: "Prometheus metrics (the text exposition format): requests, RPCs, the database pool, caches and the process. Served when SVC_METRICS is on.",
      responses: {
        "200": { description: "The metrics", content: { "text/plain": { schema: { type: "string", description: "The metrics as Prometheus text." } } } },
        "404": { description: "SVC_METRICS is off" },
      },
    },
  },
};

export const otherPaths: Record<string, Record<string, unknown>> = { ...portabilityPaths, ...oidcPaths, ...operationsPaths };
