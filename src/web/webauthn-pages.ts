import { errorBox, esc, form, layout, type PageContext } from "./pages.js";

/**
 * The WebAuthn pages: the options go into the page as JSON data (not a script, so the CSP needs no inline
 * script), and the static script /ui/login/webauthn.js hands them to navigator.credentials and posts the
 * credential back in the form's `credential` field.
 */
export function webauthnPage(
  p: PageContext,
  opts: {
    title: string;
    intro: string;
    mode: "create" | "get";
    options: unknown;
    action: string;
    extra: Record<string, string>;
    loginName?: string;
    error?: string;
  },
): string {
  // "<" escaped so that no value can end the data element early.
  const json = JSON.stringify(opts.options).replace(/</g, "\\u003c");
  return layout(
    p,
    opts.title,
    (opts.loginName ? `<p class="who">${esc(opts.loginName)}</p>` : "") +
      `<p>${esc(opts.intro)}</p>` +
      errorBox(opts.error) +
      `<p class="error" role="alert" id="webauthn-error" hidden></p>` +
      `<script type="application/json" id="webauthn-options">${json}</script>` +
      `<div id="webauthn" data-mode="${opts.mode}">` +
      form(
        p,
        opts.action,
        `<input type="hidden" name="credential" value=""><button type="button" id="webauthn-start">${esc(p.t.webauthnContinue)}</button>`,
        opts.extra,
      ) +
      `</div><script src="/ui/login/webauthn.js" defer></script>`,
  );
}

/** The browser side: base64url <-> bytes around navigator.credentials, as the WebAuthn JSON encoding wants it. */
export const webauthnScript = `"use strict";
(() => {
  const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const box = document.getElementById("webauthn");
  if (!box) return;
  const o = JSON.parse(document.getElementById("webauthn-options").textContent);
  const ids = (list) => (list || []).map((c) => ({ ...c, id: bytes(c.id) }));
  async function run() {
    let cred;
    if (box.dataset.mode === "create") {
      const c = await navigator.credentials.create({
        publicKey: { ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) }, excludeCredentials: ids(o.excludeCredentials) },
      });
      cred = {
        id: c.id, rawId: b64(c.rawId), type: c.type, clientExtensionResults: c.getClientExtensionResults(),
        response: {
          clientDataJSON: b64(c.response.clientDataJSON), attestationObject: b64(c.response.attestationObject),
          transports: c.response.getTransports ? c.response.getTransports() : [],
        },
      };
    } else {
      const c = await navigator.credentials.get({ publicKey: { ...o, challenge: bytes(o.challenge), allowCredentials: ids(o.allowCredentials) } });
      cred = {
        id: c.id, rawId: b64(c.rawId), type: c.type, clientExtensionResults: c.getClientExtensionResults(),
        response: {
          clientDataJSON: b64(c.response.clientDataJSON), authenticatorData: b64(c.response.authenticatorData),
          signature: b64(c.response.signature), ...(c.response.userHandle ? { userHandle: b64(c.response.userHandle) } : {}),
        },
      };
    }
    const f = box.querySelector("form");
    f.elements.credential.value = JSON.stringify(cred);
    f.submit();
  }
  document.getElementById("webauthn-start").addEventListener("click", () =>
    run().catch((e) => {
      const err = document.getElementById("webauthn-error");
      err.textContent = String(e && e.message);
      err.hidden = false;
    }),
  );
})();
`;
