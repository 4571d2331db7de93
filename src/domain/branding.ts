import type { Property } from "./settings-kinds.js";

/**
 * Branding settings (ZITADEL's label policy): colours of the login UI and the mails in light and dark mode,
 * which mode the page follows, whether the product's own branding shows, and custom key-value pairs that the
 * login UI's stylesheet carries as CSS variables. Two kinds share these properties: `branding_preview`, what
 * the API writes, and `branding`, what the login UI and the mails use, copied from the preview by activation.
 */

const HEX = /^#[0-9a-f]{6}$/;
const color = (value: string): Property<"string"> => ({
  type: "string",
  default: value,
  check: (v) => (HEX.test(v) ? undefined : `"${v.slice(0, 20)}" is not a colour in the form #rrggbb (lower case)`),
});

const THEME_MODES = ["auto", "light", "dark"];

/** `key=value`: a key of lower-case letters, digits and hyphens; a value that cannot leave a CSS declaration. */
const CUSTOM = /^([a-z][a-z0-9-]{0,39})=([#a-zA-Z0-9 .,%()-]{0,100})$/;
export const customPair = (item: string) => CUSTOM.exec(item);

/** Uploaded files a branding names by their SHA-256 (hex): served by the login UI at /ui/login/assets/<sha256>. */
export const assetKinds = ["logo", "logo_dark", "icon", "icon_dark", "font"] as const;
export type AssetKind = (typeof assetKinds)[number];
const asset: Property<"string"> = {
  type: "string",
  default: "",
  check: (v) => (/^([0-9a-f]{64})?$/.test(v) ? undefined : "must be the SHA-256 (hex) of an uploaded asset, or empty"),
};

/** Largest upload per kind: images for the page, a font file. */
export const assetMaxBytes: Record<AssetKind, number> = { logo: 512 * 1024, logo_dark: 512 * 1024, icon: 256 * 1024, icon_dark: 256 * 1024, font: 1024 * 1024 };

const signatures: [string, number[], AssetKind[]][] = [
  ["image/png", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], ["logo", "logo_dark", "icon", "icon_dark"]],
  ["image/jpeg", [0xff, 0xd8, 0xff], ["logo", "logo_dark", "icon", "icon_dark"]],
  ["image/gif", [0x47, 0x49, 0x46, 0x38], ["logo", "logo_dark", "icon", "icon_dark"]],
  ["font/woff2", [0x77, 0x4f, 0x46, 0x32], ["font"]],
  ["font/woff", [0x77, 0x4f, 0x46, 0x46], ["font"]],
  ["font/ttf", [0x00, 0x01, 0x00, 0x00], ["font"]],
  ["font/otf", [0x4f, 0x54, 0x54, 0x4f], ["font"]],
];

/**
 * The content type of an upload, from its first bytes (never from what the client says), when the kind takes
 * it: PNG, JPEG and GIF images, WOFF2, WOFF, TrueType and OpenType fonts. No SVG: it can carry scripts.
 */
export function assetTypeOf(kind: AssetKind, data: Uint8Array): string | undefined {
  const found = signatures.find(([, magic]) => magic.every((b, i) => data[i] === b));
  return found?.[2].includes(kind) ? found[0] : undefined;
}

export const brandingProperties = {
  primary_color: color("#3448c5"),
  background_color: color("#f5f6f8"),
  warn_color: color("#8a1c1c"),
  font_color: color("#1d2330"),
  primary_color_dark: color("#8c9cff"),
  background_color_dark: color("#111318"),
  warn_color_dark: color("#ff9b9b"),
  font_color_dark: color("#e6e8ee"),
  /** "auto" follows the browser's preference (prefers-color-scheme); "light" and "dark" force one. */
  theme_mode: {
    type: "string",
    default: "auto",
    check: (v: string) => (THEME_MODES.includes(v) ? undefined : `"${v.slice(0, 20)}" is not a theme mode (${THEME_MODES.join(", ")})`),
  } as Property<"string">,
  /** Hides the "Secured by" line of the login UI and the mails. */
  hide_product_branding: { type: "bool", default: false } as Property<"bool">,
  custom_values: {
    type: "strings",
    default: [],
    check: (v: string) =>
      customPair(v) ? undefined : `"${v.slice(0, 60)}" is not key=value (key: a-z, 0-9, -; value: letters, digits, # . , % ( ) - and spaces, at most 100)`,
  } as Property<"strings">,
  logo: asset,
  logo_dark: asset,
  icon: asset,
  icon_dark: asset,
  font: asset,
} satisfies Record<string, Property>;
