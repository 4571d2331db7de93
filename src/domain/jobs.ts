/**
 * How far an export or import got, as it reports it (src/command/portability-jobs.ts keeps and stores the reports):
 * each report sets the fields it names; `objects` adds to the count. Phases are keys (the API lists them) so that
 * a console names them in its language.
 */
export interface JobReport {
  total?: number;
  done?: number;
  phase?: string;
  orgName?: string;
  objects?: number;
}
export type ReportProgress = (r: JobReport) => void;
