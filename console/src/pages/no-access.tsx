import { useEffect } from "react";
import { profile, signOut } from "../auth";
import { useT } from "../i18n";
import { messages } from "../i18n/core";

/** Signed in without any administrative role: say so, and lead to the user's own account. */
export function NoAccess() {
  const t = useT(messages);
  useEffect(() => {
    document.title = t("noAccessTitle");
  });
  return (
    <main id="main" className="no-access">
      <h1>{t("noAccessTitle")}</h1>
      <p>{t("signedInAs", { name: profile().name })}</p>
      <p>{t("noAccessText")}</p>
      <p>
        <a href="/ui/login">{t("ownAccount")}</a>
      </p>
      <p>
        <button type="button" onClick={() => void signOut()}>
          {t("signOut")}
        </button>
      </p>
    </main>
  );
}
