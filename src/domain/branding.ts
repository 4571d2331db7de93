import type { Property } from "./settings-kinds.js";

/**
 * Branding settings (the anchor's label policy): colours of the login UI and the mails in light and dark mode,
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
} satisfies Record<string, Property>;
