// What only the project and organisation sections say: "Yes"/"No" in their words.
import { useT } from "../../i18n";
import { messages } from "../../i18n/projects";

/** "Yes"/"No" in words (no colour-only information). */
export function YesNo({ value }: { value: boolean }) {
  const t = useT(messages);
  return <>{value ? t("yes") : t("no")}</>;
}
