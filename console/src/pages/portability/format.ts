// Sizes of files and exports as the page's language writes them.

/** A size in bytes, kB or MB in the page's language. */
export function bytesText(lang: string, bytes: number): string {
  const [unit, n] = bytes < 1000 ? ["byte", bytes] : bytes < 1_000_000 ? ["kilobyte", bytes / 1000] : ["megabyte", bytes / 1_000_000];
  return new Intl.NumberFormat(lang, { style: "unit", unit, unitDisplay: "short", maximumFractionDigits: 1 }).format(n);
}
