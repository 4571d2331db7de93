// Light, dark or as the system says: `data-theme` on <html> (an attribute, allowed by the CSP), remembered here.
export type Theme = "system" | "light" | "dark";
const KEY = "console.theme";

export function currentTheme(): Theme {
  const t = localStorage.getItem(KEY);
  return t === "light" || t === "dark" ? t : "system";
}

export function applyTheme(theme: Theme = currentTheme()): void {
  if (theme === "system") {
    localStorage.removeItem(KEY);
    delete document.documentElement.dataset.theme;
  } else {
    localStorage.setItem(KEY, theme);
    document.documentElement.dataset.theme = theme;
  }
}
