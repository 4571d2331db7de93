// The configuration of an application, for creation and change: an OIDC client's or an API's. Each input is named as
// the server names the field in its errors ("application.oidc.redirect_uris[0]").
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  APIAuthMethodType,
  type Application,
  type ApplicationSchema,
  OIDCAppType,
  OIDCAuthMethodType,
  OIDCGrantType,
  OIDCResponseType,
  OIDCTokenType,
} from "../../../../gen/svc/resources/application/v3alpha/application_pb.js";
import { useState } from "react";
import { useT } from "../../i18n";
import { messages } from "../../i18n/projects";
import { Checkbox, CheckGroup, Field, type FormError, RepeatedField, Select } from "../../ui";

export interface OidcState {
  appType: OIDCAppType;
  authMethodType: OIDCAuthMethodType;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: OIDCGrantType[];
  responseTypes: OIDCResponseType[];
  accessTokenType: OIDCTokenType;
  idTokenUserinfoAssertion: boolean;
  accessTokenRoleAssertion: boolean;
  idTokenRoleAssertion: boolean;
  devMode: boolean;
  clockSkew: string;
}

export interface AppState {
  kind: "oidc" | "api";
  name: string;
  oidc: OidcState;
  apiAuthMethodType: APIAuthMethodType;
}

export const newApp = (): AppState => ({
  kind: "oidc",
  name: "",
  oidc: {
    appType: OIDCAppType.OIDC_APP_TYPE_WEB,
    authMethodType: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC,
    redirectUris: [""],
    postLogoutRedirectUris: [""],
    grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE],
    responseTypes: [OIDCResponseType.OIDC_RESPONSE_TYPE_CODE],
    accessTokenType: OIDCTokenType.OIDC_TOKEN_TYPE_BEARER,
    idTokenUserinfoAssertion: false,
    accessTokenRoleAssertion: false,
    idTokenRoleAssertion: false,
    devMode: false,
    clockSkew: "0",
  },
  apiAuthMethodType: APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC,
});

/** The form's state of a stored application. */
export function appState(app: Application | undefined): AppState {
  const s = newApp();
  s.name = app?.name ?? "";
  if (app?.type.case === "api") {
    s.kind = "api";
    s.apiAuthMethodType = app.type.value.authMethodType || APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC;
  } else if (app?.type.case === "oidc") {
    const o = app.type.value;
    const skew = o.clockSkew ? Number(o.clockSkew.seconds) + o.clockSkew.nanos / 1e9 : 0;
    s.oidc = {
      appType: o.appType || OIDCAppType.OIDC_APP_TYPE_WEB,
      authMethodType: o.authMethodType || OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC,
      redirectUris: o.redirectUris.length ? [...o.redirectUris] : [""],
      postLogoutRedirectUris: o.postLogoutRedirectUris.length ? [...o.postLogoutRedirectUris] : [""],
      grantTypes: [...o.grantTypes],
      responseTypes: [...o.responseTypes],
      accessTokenType: o.accessTokenType || OIDCTokenType.OIDC_TOKEN_TYPE_BEARER,
      idTokenUserinfoAssertion: o.idTokenUserinfoAssertion,
      accessTokenRoleAssertion: o.accessTokenRoleAssertion,
      idTokenRoleAssertion: o.idTokenRoleAssertion,
      devMode: o.devMode,
      clockSkew: String(skew),
    };
  }
  return s;
}

/** The lists without their empty rows: what is sent, so that an error's index is the row's. */
export function tidy(s: AppState): AppState {
  const drop = (l: string[]) => l.map((x) => x.trim()).filter(Boolean);
  return { ...s, oidc: { ...s.oidc, redirectUris: drop(s.oidc.redirectUris), postLogoutRedirectUris: drop(s.oidc.postLogoutRedirectUris) } };
}

/** The request's application; a clock skew that is no number is the form's own error. */
export function appRequest(s: AppState, notANumber: string): { app: MessageInitShape<typeof ApplicationSchema> } | { error: FormError } {
  if (s.kind === "api") return { app: { name: s.name, type: { case: "api", value: { authMethodType: s.apiAuthMethodType } } } };
  const o = s.oidc;
  const skew = Number(o.clockSkew.trim() || "0");
  if (!Number.isFinite(skew)) return { error: { field: "application.oidc.clock_skew", message: notANumber } };
  const seconds = Math.trunc(skew);
  return {
    app: {
      name: s.name,
      type: {
        case: "oidc",
        value: {
          appType: o.appType,
          authMethodType: o.authMethodType,
          redirectUris: o.redirectUris,
          postLogoutRedirectUris: o.postLogoutRedirectUris,
          grantTypes: o.grantTypes,
          responseTypes: o.responseTypes,
          accessTokenType: o.accessTokenType,
          idTokenUserinfoAssertion: o.idTokenUserinfoAssertion,
          accessTokenRoleAssertion: o.accessTokenRoleAssertion,
          idTokenRoleAssertion: o.idTokenRoleAssertion,
          devMode: o.devMode,
          clockSkew: { seconds: BigInt(seconds), nanos: Math.round((skew - seconds) * 1e9) },
        },
      },
    },
  };
}

/** Every field name of the form, for errors that one of them shows. */
export const appFieldNames = [
  "application.name",
  "application.type",
  "application.api.auth_method_type",
  "application.oidc.app_type",
  "application.oidc.auth_method_type",
  "application.oidc.redirect_uris",
  "application.oidc.post_logout_redirect_uris",
  "application.oidc.grant_types",
  "application.oidc.response_types",
  "application.oidc.access_token_type",
  "application.oidc.clock_skew",
];

export function AppFields({ state, onChange, error, isNew }: { state: AppState; onChange: (s: AppState) => void; error: FormError; isNew: boolean }) {
  const t = useT(messages);
  const o = state.oidc;
  const setOidc = (patch: Partial<OidcState>) => onChange({ ...state, oidc: { ...o, ...patch } });
  return (
    <>
      <Field
        label={t("appName")}
        name="application.name"
        value={state.name}
        onChange={(e) => onChange({ ...state, name: e.target.value })}
        error={error}
        hint={t("appNameHint")}
      />
      {isNew && (
        <Select
          label={t("appKind")}
          name="application.type"
          value={state.kind}
          onChange={(v) => onChange({ ...state, kind: v as "oidc" | "api" })}
          error={error}
          options={[
            { value: "oidc", label: t("kindOidc") },
            { value: "api", label: t("kindApi") },
          ]}
        />
      )}
      {state.kind === "api" ? (
        <Select
          label={t("authMethod")}
          name="application.api.auth_method_type"
          value={String(state.apiAuthMethodType)}
          onChange={(v) => onChange({ ...state, apiAuthMethodType: Number(v) })}
          error={error}
          options={[
            { value: String(APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC), label: t("authBasic") },
            { value: String(APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT), label: t("authPrivateKeyJwt") },
          ]}
        />
      ) : (
        <>
          <Select
            label={t("appType")}
            name="application.oidc.app_type"
            value={String(o.appType)}
            onChange={(v) => {
              const appType = Number(v) as OIDCAppType;
              // browser and native apps cannot keep a secret: PKCE
              const publicClient = appType !== OIDCAppType.OIDC_APP_TYPE_WEB;
              setOidc({
                appType,
                authMethodType: publicClient
                  ? OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE
                  : o.authMethodType === OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE
                    ? OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC
                    : o.authMethodType,
              });
            }}
            error={error}
            options={[
              { value: String(OIDCAppType.OIDC_APP_TYPE_WEB), label: t("appTypeWeb") },
              { value: String(OIDCAppType.OIDC_APP_TYPE_USER_AGENT), label: t("appTypeUserAgent") },
              { value: String(OIDCAppType.OIDC_APP_TYPE_NATIVE), label: t("appTypeNative") },
            ]}
          />
          <Select
            label={t("authMethod")}
            name="application.oidc.auth_method_type"
            value={String(o.authMethodType)}
            onChange={(v) => setOidc({ authMethodType: Number(v) })}
            error={error}
            options={[
              { value: String(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC), label: t("authBasic") },
              { value: String(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_POST), label: t("authPost") },
              { value: String(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE), label: t("authNone") },
              { value: String(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT), label: t("authPrivateKeyJwt") },
            ]}
          />
          <RepeatedField
            legend={t("redirectUris")}
            name="application.oidc.redirect_uris"
            values={o.redirectUris}
            onChange={(redirectUris) => setOidc({ redirectUris })}
            error={error}
            hint={t("redirectUrisHint")}
            type="text"
          />
          <RepeatedField
            legend={t("postLogoutUris")}
            name="application.oidc.post_logout_redirect_uris"
            values={o.postLogoutRedirectUris}
            onChange={(postLogoutRedirectUris) => setOidc({ postLogoutRedirectUris })}
            error={error}
            hint={t("postLogoutUrisHint")}
            type="text"
          />
          <CheckGroup
            legend={t("grantTypes")}
            name="application.oidc.grant_types"
            selected={o.grantTypes}
            onChange={(grantTypes) => setOidc({ grantTypes })}
            error={error}
            options={[
              { value: OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE, label: "authorization_code" },
              { value: OIDCGrantType.OIDC_GRANT_TYPE_IMPLICIT, label: "implicit" },
              { value: OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN, label: "refresh_token" },
              { value: OIDCGrantType.OIDC_GRANT_TYPE_TOKEN_EXCHANGE, label: t("grantTokenExchange") },
            ]}
          />
          <CheckGroup
            legend={t("responseTypes")}
            name="application.oidc.response_types"
            selected={o.responseTypes}
            onChange={(responseTypes) => setOidc({ responseTypes })}
            error={error}
            hint={t("responseTypesHint")}
            options={[
              { value: OIDCResponseType.OIDC_RESPONSE_TYPE_CODE, label: "code" },
              { value: OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN, label: "id_token" },
              { value: OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN, label: "id_token token" },
            ]}
          />
          <Select
            label={t("accessTokenType")}
            name="application.oidc.access_token_type"
            value={String(o.accessTokenType)}
            onChange={(v) => setOidc({ accessTokenType: Number(v) })}
            error={error}
            options={[
              { value: String(OIDCTokenType.OIDC_TOKEN_TYPE_BEARER), label: t("tokenOpaque") },
              { value: String(OIDCTokenType.OIDC_TOKEN_TYPE_JWT), label: t("tokenJwt") },
            ]}
          />
          <Checkbox
            label={t("idTokenUserinfo")}
            name="application.oidc.id_token_userinfo_assertion"
            checked={o.idTokenUserinfoAssertion}
            onChange={(idTokenUserinfoAssertion) => setOidc({ idTokenUserinfoAssertion })}
          />
          <Checkbox
            label={t("accessTokenRoles")}
            name="application.oidc.access_token_role_assertion"
            checked={o.accessTokenRoleAssertion}
            onChange={(accessTokenRoleAssertion) => setOidc({ accessTokenRoleAssertion })}
          />
          <Checkbox
            label={t("idTokenRoles")}
            name="application.oidc.id_token_role_assertion"
            checked={o.idTokenRoleAssertion}
            onChange={(idTokenRoleAssertion) => setOidc({ idTokenRoleAssertion })}
          />
          <Checkbox label={t("devMode")} name="application.oidc.dev_mode" checked={o.devMode} onChange={(devMode) => setOidc({ devMode })} />
          <p className="hint">{t("devModeHint")}</p>
          <Field
            label={t("clockSkew")}
            name="application.oidc.clock_skew"
            inputMode="decimal"
            value={o.clockSkew}
            onChange={(e) => setOidc({ clockSkew: e.target.value })}
            error={error}
            hint={t("clockSkewHint")}
          />
        </>
      )}
    </>
  );
}

/** Whether the form's auth method has a client secret. */
export function stateUsesSecret(s: AppState): boolean {
  if (s.kind === "api") return s.apiAuthMethodType !== APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT;
  return s.oidc.authMethodType === OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC || s.oidc.authMethodType === OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_POST;
}

/** Whether an application's auth method has a client secret. */
export const usesSecret = (app: Application | undefined): boolean => !!app && stateUsesSecret(appState(app));

/** Whether an application authenticates with keys (private_key_jwt). */
export function usesKeys(app: Application | undefined): boolean {
  if (!app) return false;
  const s = appState(app);
  return s.kind === "api"
    ? s.apiAuthMethodType === APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT
    : s.oidc.authMethodType === OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT;
}

/**
 * The state of an application's form and its check before sending: `request()` tidies the state and gives the
 * request's application, or shows the error the check found and gives undefined; `error` is that or `serverError`.
 */
export function useAppForm(initial: () => AppState, serverError: FormError) {
  const t = useT(messages);
  const [state, setState] = useState<AppState>(initial);
  const [formError, setFormError] = useState<FormError>();
  const request = () => {
    const sent = tidy(state);
    setState(sent);
    const req = appRequest(sent, t("clockSkewNumber"));
    if ("error" in req) {
      setFormError(req.error);
      return undefined;
    }
    setFormError(undefined);
    return req.app;
  };
  return { state, setState, error: formError ?? serverError, request };
}
