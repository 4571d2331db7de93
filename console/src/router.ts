// Paths under /ui/console/ without a router library: the History API and one hook.
import { useSyncExternalStore } from "react";

export const BASE = "/ui/console";
const listeners = new Set<() => void>();
const notify = () => {
  for (const l of listeners) l();
};
window.addEventListener("popstate", notify);

/** The path inside the console ("/users/123"), and the search parameters. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const href = useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => location.pathname + location.search,
  );
  const url = new URL(href, location.origin);
  return { path: url.pathname.slice(BASE.length) || "/", query: url.searchParams };
}

export function navigate(to: string, replace = false): void {
  const href = to.startsWith(BASE) ? to : `${BASE}${to}`;
  if (replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  notify();
  window.scrollTo(0, 0);
}

/** `/users/:id` against a path: the parameters, or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split("/");
  const a = path.split("/");
  if (p.length !== a.length) return undefined;
  const out: Record<string, string> = {};
  for (const [i, part] of p.entries()) {
    if (part.startsWith(":")) out[part.slice(1)] = decodeURIComponent(a[i]!);
    else if (part !== a[i]) return undefined;
  }
  return out;
}
