import { create } from "@bufbuild/protobuf";
import { durationFromMs, durationMs } from "@bufbuild/protobuf/wkt";
import {
  APIAuthMethodType,
  ApplicationState,
  GetApplicationSchema,
  OIDCAppType,
  OIDCAuthMethodType,
  OIDCGrantType,
  OIDCResponseType,
  OIDCTokenType,
  type APIConfiguration,
  type OIDCConfiguration,
} from "../../../gen/svc/resources/application/v3alpha/application_pb.js";
import type { ApiConfig, AppConfig, GrantType, OidcConfig, ResponseType } from "../../command/applications.js";
import type { ApplicationView } from "../../query/applications.js";
import { orgRowDetails } from "../convert.js";

/** Two-way maps between the proto enums and the names the OAuth specifications use. */
function twoWay<E extends number, N extends string>(pairs: [E, N][], fallback: N) {
  return {
    name: (e: E): N => pairs.find(([x]) => x === e)?.[1] ?? fallback,
    value: (n: string): E => pairs.find(([, x]) => x === n)?.[0] ?? (0 as E),
  };
}

const responseTypes = twoWay<OIDCResponseType, ResponseType>(
  [
    [OIDCResponseType.OIDC_RESPONSE_TYPE_CODE, "code"],
    [OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN, "id_token"],
    [OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN, "id_token token"],
  ],
  "code",
);
const grantTypes = twoWay<OIDCGrantType, GrantType>(
  [
    [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE, "authorization_code"],
    [OIDCGrantType.OIDC_GRANT_TYPE_IMPLICIT, "implicit"],
    [OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN, "refresh_token"],
    [OIDCGrantType.OIDC_GRANT_TYPE_TOKEN_EXCHANGE, "urn:ietf:params:oauth:grant-type:token-exchange"],
  ],
  "authorization_code",
);
const appTypes = twoWay<OIDCAppType, OidcConfig["appType"]>(
  [
    [OIDCAppType.OIDC_APP_TYPE_WEB, "web"],
    [OIDCAppType.OIDC_APP_TYPE_USER_AGENT, "user_agent"],
    [OIDCAppType.OIDC_APP_TYPE_NATIVE, "native"],
  ],
  "web",
);
const authMethods = twoWay<OIDCAuthMethodType, OidcConfig["authMethod"]>(
  [
    [OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC, "client_secret_basic"],
    [OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_POST, "client_secret_post"],
    [OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE, "none"],
    [OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT, "private_key_jwt"],
  ],
  "client_secret_basic",
);
const apiAuthMethods = twoWay<APIAuthMethodType, ApiConfig["authMethod"]>(
  [
    [APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC, "client_secret_basic"],
    [APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT, "private_key_jwt"],
  ],
  "client_secret_basic",
);

const uniq = <T>(xs: T[]) => [...new Set(xs)];

export function oidcConfigOf(c: OIDCConfiguration): OidcConfig {
  const responses = uniq(c.responseTypes.filter((r) => r !== OIDCResponseType.OIDC_RESPONSE_TYPE_UNSPECIFIED).map(responseTypes.name));
  const grants = uniq(c.grantTypes.filter((g) => g !== OIDCGrantType.OIDC_GRANT_TYPE_UNSPECIFIED).map(grantTypes.name));
  const browserFlow = !grants.length || grants.includes("authorization_code") || grants.includes("implicit");
  return {
    redirectUris: c.redirectUris,
    // By default the code flow, unless the grant types name neither browser flow (token exchange alone).
    responseTypes: responses.length ? responses : browserFlow ? ["code"] : [],
    grantTypes: grants.length ? grants : ["authorization_code"],
    appType: appTypes.name(c.appType),
    authMethod: authMethods.name(c.authMethodType),
    postLogoutRedirectUris: c.postLogoutRedirectUris,
    accessTokenType: c.accessTokenType === OIDCTokenType.OIDC_TOKEN_TYPE_JWT ? "jwt" : "opaque",
    idTokenUserinfoAssertion: c.idTokenUserinfoAssertion,
    accessTokenRoleAssertion: c.accessTokenRoleAssertion,
    idTokenRoleAssertion: c.idTokenRoleAssertion,
    devMode: c.devMode,
    clockSkewMs: c.clockSkew ? durationMs(c.clockSkew) : 0,
  };
}

export function appConfigOf(type: { case: "oidc"; value: OIDCConfiguration } | { case: "api"; value: APIConfiguration }): AppConfig {
  return type.case === "oidc"
    ? { kind: "oidc", oidc: oidcConfigOf(type.value) }
    : { kind: "api", api: { authMethod: apiAuthMethods.name(type.value.authMethodType) } };
}

export function toGetApplication(a: ApplicationView) {
  const c = a.config as unknown as OidcConfig & ApiConfig;
  const type =
    a.kind === "oidc"
      ? {
          case: "oidc" as const,
          value: {
            redirectUris: c.redirectUris,
            responseTypes: c.responseTypes.map(responseTypes.value),
            grantTypes: c.grantTypes.map(grantTypes.value),
            appType: appTypes.value(c.appType),
            authMethodType: authMethods.value(c.authMethod),
            postLogoutRedirectUris: c.postLogoutRedirectUris,
            accessTokenType: c.accessTokenType === "jwt" ? OIDCTokenType.OIDC_TOKEN_TYPE_JWT : OIDCTokenType.OIDC_TOKEN_TYPE_BEARER,
            idTokenUserinfoAssertion: c.idTokenUserinfoAssertion,
            accessTokenRoleAssertion: c.accessTokenRoleAssertion,
            idTokenRoleAssertion: c.idTokenRoleAssertion,
            devMode: c.devMode,
            clockSkew: durationFromMs(c.clockSkewMs),
          },
        }
      : { case: "api" as const, value: { authMethodType: apiAuthMethods.value(c.authMethod) } };
  return create(GetApplicationSchema, {
    details: orgRowDetails(a.id, a),
    projectId: a.projectId,
    state: a.state === "inactive" ? ApplicationState.INACTIVE : ApplicationState.ACTIVE,
    application: { name: a.name, type },
    clientId: a.clientId,
    hasSecret: !!a.secretHash,
  });
}
