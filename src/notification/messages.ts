/**
 * Rendering of the messages the server sends (their texts: src/domain/texts/messages.ts and ./languages/, overridden by the text
 * settings): `{name}`, `{code}`, `{link}`, `{minutes}` are filled in, the HTML part derived from the text.
 */
import type { MessageKind } from "../domain/texts/messages.js";
import { translations } from "../domain/texts/translations.js";

export type { MessageKind } from "../domain/texts/messages.js";

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The language a message is sent in: the user's, when the messages are translated into it; else English. */
const messageLanguage = (preferred: string | null | undefined) => (preferred && translations[preferred] ? preferred : "en");

/**
 * The message in `language` (English when the catalogue lacks it); `texts`, the text settings' values in force
 * for the user, give its subject and text (`<language>.message.<kind>.subject|text`; their built-in values are
 * the catalogue's).
 */
export function renderMessage(
  kind: MessageKind,
  language: string,
  vars: Record<string, string>,
  texts: Readonly<Record<string, string>> = {},
  /** The branding's primary colour (#rrggbb, checked when set) for the link in the HTML part. */
  linkColor?: string,
): { language: string; subject: string; text: string; html: string } {
  const lang = messageLanguage(language);
  const builtIn = translations[lang]!.messages[kind];
  const t = { subject: texts[`${lang}.message.${kind}.subject`] ?? builtIn.subject, text: texts[`${lang}.message.${kind}.text`] ?? builtIn.text };
  const fill = (s: string, esc: (v: string) => string) => s.replace(/\{(\w+)\}/g, (_, k: string) => esc(vars[k] ?? ""));
  const text = fill(t.text, (v) => v);
  const html = `<!doctype html><html lang="${lang}"><body><p>${fill(escapeHtml(t.text), (v) => {
    const e = escapeHtml(v);
    return v === vars.link ? `<a href="${e}"${linkColor ? ` style="color:${linkColor}"` : ""}>${e}</a>` : e;
  })
    .replace(/\n\n/g, "</p><p>")
    .replace(/\n/g, "<br>")}</p></body></html>`;
  return { language: lang, subject: fill(t.subject, (v) => v), text, html };
}
