/**
 * Every kind of settings, declared once: its properties with their types and built-in values, and the event
 * its changes are stored with. The rest is derived (settings.ts): the change a set/reset request makes, the
 * command that writes it, the reducer of its event, the resolution along system > instance > organisation
 * with the owner of each value, and the API services, which only map their protos onto these names.
 * A new kind: an entry here, its event in src/events/definitions.ts, its row in docs/events.md, its protos.
 */
import { brandingProperties } from "./branding.js";
import { textProperties } from "./texts/settings.js";
import { translations } from "./texts/translations.js";

/** The value of each property type as events and the projection store it (JSON). */
export interface PropertyTypes {
  bool: boolean;
  uint64: number;
  /** In seconds. */
  duration: number;
  string: string;
  /** A set of strings, in the order given. */
  strings: readonly string[];
}
export type PropertyType = keyof PropertyTypes;

/** What a list's check looks at: one item at a time, so that an error can name the item. */
type Checked<T extends PropertyType> = T extends "strings" ? string : PropertyTypes[T];

export interface Property<T extends PropertyType = PropertyType> {
  readonly type: T;
  /** The built-in value, owned by the system: what every context inherits until one sets the property. */
  readonly default: PropertyTypes[T];
  /** What is wrong with a value to be set, or undefined. Method syntax: a Property<"uint64"> is a Property. */
  check?(value: Checked<T>): string | undefined;
  /** Immutable: always the built-in value (the supported languages); no request can set or reset it. */
  readonly fixed?: boolean;
}

export interface KindDeclaration {
  /** The event type that stores a change; src/events/definitions.ts defines it with the SettingsSet payload. */
  readonly event: string;
  readonly properties: Readonly<Record<string, Property>>;
}

const property =
  <T extends PropertyType>(type: T) =>
  (value: PropertyTypes[T], check?: (value: Checked<T>) => string | undefined): Property<T> =>
    check ? { type, default: value, check } : { type, default: value };
const bool = property("bool");
const uint64 = property("uint64");
const string = property("string");
const strings = property("strings");
const duration = property("duration");
const fixed = <T extends PropertyType>(p: Property<T>): Property<T> => ({ ...p, fixed: true });

const between = (min: number, max: number) => (v: number) => (v < min || v > max ? `must be between ${min} and ${max}` : undefined);

/** The languages the server ships complete texts for (./texts/languages/); default and restricted languages are chosen from them. */
export const supportedLanguages: readonly string[] = Object.keys(translations).sort();
const supported = (key: string) => (supportedLanguages.includes(key) ? undefined : `"${key}" is not a supported language (${supportedLanguages.join(", ")})`);

/** An origin as a browser sends it (RFC 6454): scheme, host and port only, http(s), no path, query or credentials. */
function originCheck(value: string): string | undefined {
  const wrong = `"${value.slice(0, 100)}" is not an origin (scheme://host[:port], e.g. https://app.example.com)`;
  // Host names of letters, digits, dots and hyphens (IDNs in their xn-- form) or IPv6 literals: nothing that could
  // end a Content-Security-Policy source list, which these values go into.
  if (!/^https?:\/\/([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/.test(value) || !URL.canParse(value)) return wrong;
  return new URL(value).origin === value ? undefined : wrong;
}

/** The second factors the server offers: TOTP, one-time codes by e-mail and SMS, WebAuthn security keys (U2F). */
export const secondFactorTypes: readonly string[] = ["otp", "otp_email", "otp_sms", "u2f"];
const secondFactorCheck = (v: string) =>
  secondFactorTypes.includes(v) ? undefined : `"${v.slice(0, 50)}" is not a second factor (${secondFactorTypes.join(", ")})`;

export const settingsKinds = {
  /** Feature flags: every flag starts off (the first instance turns some on, src/command/setup.ts). */
  feature: {
    event: "settings.feature.set",
    properties: { multitenancy_resources_api: bool(false), multitenancy_settings: bool(false), oidc_token_exchange: bool(false) },
  },
  language: {
    event: "settings.language.set",
    properties: {
      default_language: string("en", supported),
      /** Those into which messages and login labels are translated; the discovery endpoint lists them. */
      restricted_languages: strings(supportedLanguages, supported),
      supported_languages: fixed(strings(supportedLanguages)),
    },
  },
  /** What a new password must contain. */
  password_complexity: {
    event: "settings.password_complexity.set",
    properties: {
      min_length: uint64(8, between(1, 200)),
      has_uppercase: bool(true),
      has_lowercase: bool(true),
      has_number: bool(true),
      has_symbol: bool(true),
    },
  },
  /**
   * Failed password checks allowed before the user is locked (0: never locked), and how long the lock lasts
   * (seconds, as Keycloak's temporary lockout; 0: until an administrator unlocks it, the permanent lockout).
   */
  lockout: {
    event: "settings.lockout.set",
    properties: { max_password_attempts: uint64(5, between(0, 1000)), lockout_duration: duration(0, between(0, 365 * 86400)) },
  },
  /**
   * Self-registration in the login UI is off unless allowed. Second factors: which ones users may use (the
   * ZITADEL's names: "otp" TOTP, "otp_email", "otp_sms", "u2f" security keys), whether every sign-in needs one (force_mfa), or only a
   * sign-in with a local password (force_mfa_local_only), and how long a user may put off setting one up when
   * it is not forced (mfa_init_skip_lifetime, seconds; 0: never asked).
   */
  login: {
    event: "settings.login.set",
    properties: {
      allow_register: bool(false),
      second_factors: strings(["otp"], secondFactorCheck),
      force_mfa: bool(false),
      force_mfa_local_only: bool(false),
      mfa_init_skip_lifetime: duration(0, between(0, 10 * 365 * 86400)),
      /** Sign-in with a passkey alone (WebAuthn with user verification), skipping the password. Off unless allowed. */
      passwordless_allowed: bool(false),
      /** A custom login UI that authorization requests with the header x-svc-login-client are sent to (empty: the built-in one). */
      custom_login_url: string("", (v) =>
        v === "" || (/^https?:\/\/\S+$/.test(v) && URL.canParse(v)) ? undefined : `"${v.slice(0, 100)}" is not an absolute http(s) URL`,
      ),
      /** The login UI offers the identity providers active in the context and completes sign-ins through them (ZITADEL's default: on). */
      allow_external_idp: bool(true),
    },
  },
  /**
   * Impersonation through token exchange (judged in the impersonated user's organisation), and which origins may
   * frame the login UI (only while iframe embedding is on). Everything off by default.
   */
  security: {
    event: "settings.security.set",
    properties: { enable_impersonation: bool(false), allowed_origins: strings([], originCheck), enable_iframe_embedding: bool(false) },
  },
  /**
   * Organisation domains (src/command/org-domains.ts): an added domain is verified only by validation (a file or a
   * TXT record) unless validate_org_domains is off; with user_login_must_be_domain, users sign in with
   * `<username>@<verified domain of their organisation>` only; with smtp_sender_address_matches_instance_domain, an
   * SMTP provider's sender must be an address at one of the instance's domains. Judged in the organisation.
   */
  domain: {
    event: "settings.domain.set",
    properties: {
      validate_org_domains: bool(true),
      user_login_must_be_domain: bool(false),
      smtp_sender_address_matches_instance_domain: bool(false),
    },
  },
  /**
   * Texts of the login UI and of the messages, per supported language and key (src/domain/texts/settings.ts):
   * a context overrides single texts; what it does not set is inherited, down to the built-in texts.
   */
  text: { event: "settings.text.set", properties: textProperties(supportedLanguages) },
  /** What the login UI and the mails show (src/domain/branding.ts): the preview, once activated. */
  branding: { event: "settings.branding.set", properties: brandingProperties },
  /** What the branding API sets; `ActivateBranding` copies a context's own preview values to `branding`. */
  branding_preview: { event: "settings.branding_preview.set", properties: brandingProperties },
} as const satisfies Record<string, KindDeclaration>;

export type SettingsKind = keyof typeof settingsKinds;
export const settingsKindNames = Object.keys(settingsKinds) as SettingsKind[];

type PropertiesOf<K extends SettingsKind> = (typeof settingsKinds)[K]["properties"];
export type PropertyName<K extends SettingsKind> = keyof PropertiesOf<K> & string;
/** The resolved values of a kind, typed as declared. */
export type SettingsValues<K extends SettingsKind> = {
  [P in PropertyName<K>]: PropertiesOf<K>[P] extends { type: infer T extends PropertyType } ? PropertyTypes[T] : never;
};

/** A kind's properties, by name (untyped: for the code that treats every kind alike). */
export const propertiesOf = (kind: SettingsKind): Readonly<Record<string, Property>> => settingsKinds[kind].properties;

export function defaultsOf<K extends SettingsKind>(kind: K): SettingsValues<K> {
  return Object.fromEntries(Object.entries(propertiesOf(kind)).map(([name, p]) => [name, p.default])) as SettingsValues<K>;
}

export type FeatureName = PropertyName<"feature">;
export const featureNames = Object.keys(settingsKinds.feature.properties) as FeatureName[];
export const isFeatureName = (name: string): name is FeatureName => name in settingsKinds.feature.properties;
