/**
 * The one handler that writes more than one table, on purpose: an instance removed takes every projection row
 * of it, in every table that has an instance_id (found in the catalogue, so a table added later is not
 * forgotten); the log keeps its events. The instance's own row goes in its projection (instance.ts). Not a
 * table's projection, so not among the sources of a table's reads (query/sources.ts): the removed instance's
 * requests are refused before any read.
 */
import * as events from "../events/index.js";
import { collectHandlers } from "./projection.js";

export const instanceCascade = {
  name: "instance cascade",
  handlers: collectHandlers((on) => {
    on(events.instanceRemoved, async (_tx, e, sql) => {
      const { rows } = await sql.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'instance_id' AND table_name <> 'events'",
      );
      for (const { table_name } of rows) await sql.query(`DELETE FROM "${table_name.replace(/"/g, "")}" WHERE instance_id = $1`, [e.aggregateId]);
    });
  }),
};
