import type { Property } from "../settings-kinds.js";
import { loginTextsEn, type TextKey } from "./login.js";
import type { MessageKind } from "./messages.js";
import { translations } from "./translations.js";

/**
 * The text settings' properties: every login label and every message's subject and text, per language, named
 * `<language>.<key>` with the keys `login.<label>` and `message.<kind>.subject|text` (what the API calls a
 * text's key). The built-in value is the language's own text, else the English one.
 */

/** The longest text: a message's body; labels and subjects are shorter. */
const MAX_LABEL = 500;
const MAX_BODY = 4000;

const placeholders = (s: string) => new Set([...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!));

/** Labels and subjects are one line: a line break in a mail's subject would end its header. */
function labelCheck(value: string): string | undefined {
  if (!value.trim()) return "must not be empty (reset it to use the built-in text)";
  if (value.length > MAX_LABEL) return `must be at most ${MAX_LABEL} characters`;
  if (/\p{Cc}/u.test(value)) return "must be one line, without control characters";
  return undefined;
}

/** A message's text may span lines; other control characters have no place in it. */
function bodyCheck(value: string): string | undefined {
  if (!value.trim()) return "must not be empty (reset it to use the built-in text)";
  if (/\p{Cc}/u.test(value.replaceAll("\n", ""))) return "must not contain control characters other than line breaks";
  return undefined;
}

/**
 * A message's text keeps the placeholders its built-in text fills in (a verification mail without `{code}`
 * or `{link}` could not be used) and names no others.
 */
function messageCheck(builtIn: string, max: number) {
  const needed = placeholders(builtIn);
  return (value: string): string | undefined => {
    const short = value.length > max ? `must be at most ${max} characters` : max === MAX_LABEL ? labelCheck(value) : bodyCheck(value);
    if (short) return short;
    const used = placeholders(value);
    const missing = [...needed].filter((p) => !used.has(p));
    if (missing.length) return `must contain ${missing.map((p) => `{${p}}`).join(", ")}`;
    const unknown = [...used].filter((p) => !needed.has(p));
    if (unknown.length)
      return `may only use the placeholders ${[...needed].map((p) => `{${p}}`).join(", ") || "none"}; not ${unknown.map((p) => `{${p}}`).join(", ")}`;
    return undefined;
  };
}

const text = (value: string, check: (v: string) => string | undefined): Property<"string"> => ({ type: "string", default: value, check });

/** The keys of one language's texts, with their built-in values there. */
export function textKeysOf(language: string): Map<string, Property<"string">> {
  const out = new Map<string, Property<"string">>();
  const { login, messages } = translations[language] ?? translations.en!;
  for (const key of Object.keys(loginTextsEn) as TextKey[]) {
    const builtIn = login[key];
    // a label with placeholders ({n}) keeps them, as a message does
    out.set(`login.${key}`, text(builtIn, placeholders(builtIn).size ? messageCheck(builtIn, MAX_LABEL) : labelCheck));
  }
  for (const [kind, m] of Object.entries(messages) as [MessageKind, { subject: string; text: string }][]) {
    out.set(`message.${kind}.subject`, text(m.subject, messageCheck(m.subject, MAX_LABEL)));
    out.set(`message.${kind}.text`, text(m.text, messageCheck(m.text, MAX_BODY)));
  }
  return out;
}

/** Every language's texts as properties of one settings kind: `<language>.<key>`. */
export function textProperties(languages: readonly string[]): Record<string, Property<"string">> {
  const out: Record<string, Property<"string">> = {};
  for (const language of languages) for (const [key, p] of textKeysOf(language)) out[`${language}.${key}`] = p;
  return out;
}
