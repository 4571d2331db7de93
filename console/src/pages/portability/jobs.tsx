// The jobs of the last 24 hours as the server keeps them (ListPortabilityJobs): refreshed every second while one
// runs, a status line when one finishes, an export's file to download, an import's objects not placed, a failure's
// error and what to do after an interruption. Nothing of them lives only in this page: leaving it and coming back
// shows the same list.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useEffect, useId, useRef, useState } from "react";
import {
  type PortabilityJob,
  PortabilityJobKind,
  PortabilityJobState,
  PortabilityService,
} from "../../../../gen/svc/resources/portability/v3alpha/portability_service_pb.js";
import { errorOf } from "../../api";
import { useLanguage, useT } from "../../i18n";
import { messages as core } from "../../i18n/core";
import { messages } from "../../i18n/portability";
import { bytesText } from "./format";
import { Card, type Column, DataTable, ErrorText, Status, useDate, useRun } from "../../ui";

const running = (j: PortabilityJob) => j.state === PortabilityJobState.RUNNING;
const isExport = (j: PortabilityJob) => j.kind === PortabilityJobKind.EXPORT;

/** Singular or plural by the language's rules. */
function usePlural() {
  const lang = useLanguage();
  const rules = new Intl.PluralRules(lang);
  const number = new Intl.NumberFormat(lang);
  return { one: (n: number | bigint) => rules.select(Number(n)) === "one", format: (n: number | bigint) => number.format(n) };
}

export function JobsSection() {
  const t = useT(messages);
  const c = useT(core);
  const date = useDate();
  const list = useQuery(
    PortabilityService.method.listPortabilityJobs,
    {},
    {
      // coming back to the page reads the server's list at once, not the one kept from the last visit
      refetchOnMount: "always",
      refetchInterval: (q) => (q.state.data?.result.some(running) ? 1000 : false),
    },
  );
  const jobs = list.data?.result;
  // what finished is told from the lists read since the page opened (not the one kept from the last visit)
  const [openedAt] = useState(Date.now);
  const finished = useFinished(list.dataUpdatedAt >= openedAt ? jobs : undefined);

  const columns: Column<PortabilityJob>[] = [
    { key: "kind", label: t("kind"), render: (j) => t(isExport(j) ? "kindExport" : "kindImport") },
    { key: "state", label: c("state"), render: (j) => <StateText job={j} /> },
    { key: "progress", label: t("progress"), render: (j) => <Progress job={j} /> },
    { key: "started", label: t("started"), render: (j) => date(j.creationDate) },
    { key: "report", label: t("lastReport"), render: (j) => date(j.changeDate) },
    { key: "result", label: t("result"), render: (j) => <Result job={j} /> },
  ];

  return (
    <Card title={t("jobsTitle")}>
      <p className="hint">{t("jobsIntro")}</p>
      <ErrorText error={list.isError ? errorOf(list.error) : undefined} />
      <DataTable caption={t("jobsCaption")} columns={columns} rows={jobs} rowKey={(j) => j.id} loading={list.isPending} />
      <Status text={finished} />
    </Card>
  );
}

/**
 * The sentence for a job that stopped running since the last refresh, or that appeared already finished (started
 * here and done before the next refresh); the first list only sets what was known.
 */
function useFinished(jobs: PortabilityJob[] | undefined): string {
  const t = useT(messages);
  const date = useDate();
  const seen = useRef<Map<string, PortabilityJobState>>(undefined);
  const [text, setText] = useState("");
  useEffect(() => {
    if (!jobs) return;
    const before = seen.current;
    seen.current = new Map(jobs.map((j) => [j.id, j.state]));
    if (!before) return;
    const ended = jobs.filter((j) => !running(j) && (before.get(j.id) ?? PortabilityJobState.RUNNING) === PortabilityJobState.RUNNING);
    if (!ended.length) return;
    setText(
      ended
        .map((j) => {
          const d = { date: date(j.creationDate) };
          const exp = isExport(j);
          if (j.state === PortabilityJobState.DONE) return t(exp ? "finishedExport" : "finishedImport", d);
          if (j.state === PortabilityJobState.FAILED) return t(exp ? "failedExport" : "failedImport", d);
          return t(exp ? "interruptedExportStatus" : "interruptedImportStatus", d);
        })
        .join(" "),
    );
  }, [jobs, t, date]);
  return text;
}

function StateText({ job }: { job: PortabilityJob }) {
  const t = useT(messages);
  switch (job.state) {
    case PortabilityJobState.RUNNING:
      return t("stateRunning");
    case PortabilityJobState.DONE:
      return t("stateDone");
    case PortabilityJobState.FAILED:
      return <strong>{t("stateFailed")}</strong>;
    case PortabilityJobState.INTERRUPTED:
      return <strong>{t("stateInterrupted")}</strong>;
    default:
      return t("stateUnknown");
  }
}

/** What a running job works on in words ("users of Acme"); the server names its step by a key. */
function usePhase(): (job: PortabilityJob) => string {
  const t = useT(messages);
  return (job) => {
    const key = `phase_${job.phase}`;
    const step = job.phase ? (key in messages.en ? t(key as keyof typeof messages.en) : job.phase) : "";
    if (!job.orgName) return step;
    return step ? t("phaseOf", { phase: step, org: job.orgName }) : job.orgName;
  };
}

/** A native progress bar of the organisations, and the same in words with the objects and the current phase. */
function Progress({ job }: { job: PortabilityJob }) {
  const t = useT(messages);
  const n = usePlural();
  const id = useId();
  const phaseOf = usePhase();
  const orgs = job.total
    ? t(n.one(job.total) ? "orgsProgressOne" : "orgsProgressOther", { done: n.format(job.done), total: n.format(job.total) })
    : running(job)
      ? t("orgsStarting")
      : "";
  const objects = t(n.one(job.objects) ? "objectsOne" : "objectsOther", { n: n.format(job.objects) });
  // the step, unless it is the reading of the organizations already said
  const step = running(job) && !(job.phase === "organizations" && !job.total) ? phaseOf(job) : "";
  const text = [orgs, objects].filter(Boolean).join(", ") + (step ? `: ${step}` : "");
  return (
    <>
      {job.total ? <progress aria-labelledby={id} value={job.done} max={job.total} /> : running(job) ? <progress aria-labelledby={id} /> : null}
      <div id={id}>{text}</div>
    </>
  );
}

/** What a job left: an export's file, an import's objects not placed, a failure's error, an interruption's advice. */
function Result({ job }: { job: PortabilityJob }) {
  const t = useT(messages);
  const n = usePlural();
  switch (job.state) {
    case PortabilityJobState.DONE:
      if (isExport(job)) return <Download job={job} />;
      if (!job.issues.length) return t("noIssues");
      return (
        <details>
          <summary>{t(n.one(job.issues.length) ? "issuesOne" : "issuesOther", { n: n.format(job.issues.length) })}</summary>
          <ul>
            {job.issues.map((i) => (
              <li key={`${i.type}:${i.id}`}>
                <code>{i.type}</code> <code>{i.id}</code>: {i.message}
              </li>
            ))}
          </ul>
        </details>
      );
    case PortabilityJobState.FAILED:
      return <span className="field-error">{t("failedBecause", { error: job.error })}</span>;
    case PortabilityJobState.INTERRUPTED:
      return t(isExport(job) ? "interruptedExport" : "interruptedImport");
    default:
      return null;
  }
}

/** Reads a finished export's data (GetExportData) and hands it to the browser as export-<id>.json. */
function Download({ job }: { job: PortabilityJob }) {
  const t = useT(messages);
  const lang = useLanguage();
  const date = useDate();
  const read = useMutation(PortabilityService.method.getExportData);
  const action = useRun();
  const fileName = `export-${job.id}.json`;
  const size = job.dataSize ? bytesText(lang, Number(job.dataSize)) : "";
  return (
    <>
      <button
        type="button"
        disabled={action.busy}
        onClick={() =>
          action.run(
            async () => {
              const r = await read.mutateAsync({ id: job.id });
              const url = URL.createObjectURL(new Blob([r.dataJson], { type: "application/json" }));
              const a = document.createElement("a");
              a.href = url;
              a.download = fileName;
              document.body.append(a);
              a.click();
              a.remove();
              // the browser has taken the file once the click's navigation started
              setTimeout(() => URL.revokeObjectURL(url), 1000);
            },
            t("downloaded", { name: fileName }),
          )
        }
      >
        {action.busy ? t("downloading") : t("download")}
        <span className="visually-hidden"> {t("downloadOf", { date: date(job.creationDate) })}</span>
      </button>
      {size && <span className="hint"> ({size})</span>}
      <ErrorText error={action.error} />
      <Status text={action.status} />
    </>
  );
}
