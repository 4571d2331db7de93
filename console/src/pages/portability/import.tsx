// The import form: a JSON file read in the browser (at most 4 MiB; larger files go to POST /admin/v1/import) and sent
// as StartImport's data_json; the server's error about the data shows at the file input.
import { useMutation } from "@connectrpc/connect-query";
import { useRef, useState } from "react";
import { PortabilityService } from "../../../../gen/svc/resources/portability/v3alpha/portability_service_pb.js";
import { errorOf } from "../../api";
import { useLanguage, useT } from "../../i18n";
import { messages } from "../../i18n/portability";
import { bytesText } from "./format";
import { Card, Field, type FormError, FormErrorText, namesField, Status, useRun } from "../../ui";

/** The most StartImport takes in a request. */
export const MAX_IMPORT_BYTES = 4 * 1024 * 1024;
const FIELD = "data_json";

/** An error about the data or a part of it ("data_json.orgs[0]") shows at the file input. */
function importErrorOf(err: unknown): FormError {
  const e = errorOf(err);
  return namesField(e, FIELD) ? { ...e, field: FIELD } : e;
}

export function ImportForm() {
  const t = useT(messages);
  const lang = useLanguage();
  const form = useRef<HTMLFormElement>(null);
  const [file, setFile] = useState<File>();
  const start = useMutation(PortabilityService.method.startImport);
  const action = useRun({ refresh: true, toError: importErrorOf });
  /** Why the file cannot be sent here, else undefined. */
  const refusal = (f: File | undefined) => (!f ? t("chooseFile") : f.size > MAX_IMPORT_BYTES ? t("tooLarge", { size: bytesText(lang, f.size) }) : undefined);

  return (
    <Card title={t("importTitle")}>
      <form
        ref={form}
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          const why = refusal(file);
          if (why || !file) {
            action.reset();
            action.setError({ field: FIELD, message: why ?? t("chooseFile") });
            return;
          }
          let text: string;
          try {
            text = await file.text();
          } catch (err) {
            action.setError({ field: FIELD, message: t("unreadable", { message: err instanceof Error ? err.message : String(err) }) });
            return;
          }
          const r = await action.run(() => start.mutateAsync({ dataJson: text }), t("importStarted", { name: file.name }));
          if (r) {
            form.current?.reset();
            setFile(undefined);
          }
        }}
      >
        <FormErrorText error={action.error} names={[FIELD]} />
        <Field
          label={t("importFile")}
          name={FIELD}
          type="file"
          accept=".json,application/json"
          error={action.error}
          hint={t("importHint")}
          onChange={(e) => {
            const f = e.target.files?.[0];
            setFile(f);
            action.reset();
            const why = f && refusal(f);
            if (why) action.setError({ field: FIELD, message: why });
          }}
        />
        <div className="buttons">
          <button type="submit" className="primary" disabled={action.busy}>
            {t("startImport")}
          </button>
        </div>
        <Status text={action.status} />
      </form>
    </Card>
  );
}
