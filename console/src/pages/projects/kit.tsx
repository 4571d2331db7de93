// What only the project and organisation sections have: "Yes"/"No" in their words, and the state card of a project or
// an application.
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import { Card, ConfirmButton, ErrorText, Status, useRun } from "../../ui";

/** "Yes"/"No" in words (no colour-only information). */
export function YesNo({ value }: { value: boolean }) {
  const t = useT(messages);
  return <>{value ? t("yes") : t("no")}</>;
}

/**
 * The state card of a project or an application: deactivate (after a question) or reactivate where `canWrite`,
 * delete (after a question) where `canDelete`, then `deleted`; nothing where neither.
 */
export function StateCard({
  active,
  canWrite,
  canDelete,
  questions,
  deactivate,
  reactivate,
  remove,
  deleted,
}: {
  active: boolean;
  canWrite: boolean;
  canDelete: boolean;
  questions: { deactivate: string; delete: string };
  deactivate: () => Promise<unknown>;
  reactivate: () => Promise<unknown>;
  remove: () => Promise<unknown>;
  deleted: () => void;
}) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const stateAction = useRun({ refresh: true });
  if (!canWrite && !canDelete) return null;
  return (
    <Card title={t("stateTitle")}>
      <ErrorText error={stateAction.error} />
      <div className="buttons">
        {canWrite &&
          (active ? (
            <ConfirmButton label={c("deactivate")} question={questions.deactivate} onConfirm={() => stateAction.run(deactivate, t("deactivated"))} />
          ) : (
            <button type="button" onClick={() => stateAction.run(reactivate, t("reactivated"))}>
              {c("reactivate")}
            </button>
          ))}
        {canDelete && (
          <ConfirmButton
            label={c("delete")}
            question={questions.delete}
            onConfirm={async () => {
              const r = await stateAction.run(remove);
              if (r) deleted();
            }}
          />
        )}
      </div>
      <Status text={stateAction.status} />
    </Card>
  );
}
