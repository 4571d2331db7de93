import { customPair } from "../domain/branding.js";
import type { SettingsValues } from "../domain/settings-kinds.js";

type Branding = SettingsValues<"branding">;

const declarations = (b: Branding, dark: boolean) => {
  const suffix = dark ? "_dark" : "";
  const color = (name: "primary_color" | "background_color" | "warn_color" | "font_color") => b[`${name}${suffix}` as keyof Branding] as string;
  return `--svc-primary:${color("primary_color")};--svc-background:${color("background_color")};--svc-warn:${color("warn_color")};--svc-font:${color("font_color")}`;
};

/**
 * The login UI's branding stylesheet: the colours as CSS variables that the base stylesheet (pages.ts) uses,
 * light or dark as `theme_mode` says ("auto": the browser's prefers-color-scheme), and each custom value as
 * `--svc-custom-<key>`. Every value was checked when set (colours #rrggbb, custom values of a closed
 * alphabet), so none can end a declaration.
 */
export function brandingStylesheet(b: Branding): string {
  const custom = b.custom_values
    .map((item) => customPair(item))
    .filter((m) => m !== null)
    .map((m) => `--svc-custom-${m[1]}:${m[2]}`)
    .join(";");
  const root = (dark: boolean) => `:root{${declarations(b, dark)}${custom ? `;${custom}` : ""}}`;
  // The branding's font (an uploaded asset, named by its SHA-256) for the whole page.
  const font = b.font ? `@font-face{font-family:svc-brand;src:url(/ui/login/assets/${b.font})}\nbody{font-family:svc-brand,system-ui,sans-serif}\n` : "";
  if (b.theme_mode === "dark") return font + root(true);
  if (b.theme_mode === "light") return font + root(false);
  return `${font}${root(false)}\n@media (prefers-color-scheme: dark){${root(true)}}`;
}
