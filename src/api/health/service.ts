import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  HealthCheckResponse_ServingStatus as Status,
  HealthCheckResponseSchema,
  HealthListResponseSchema,
} from "../../../gen/grpc/health/v1/health_pb.js";
import { errors } from "../../errors/errors.js";

/**
 * grpc.health.v1: "" is the whole server (serving while the database answers); every mounted service can
 * be asked by name; unknown names are NOT_FOUND, as the protocol says.
 */
export function healthService(deps: { serviceNames: () => string[]; ready: () => Promise<boolean> }): ServiceImpl<typeof Health> {
  async function status(service: string): Promise<Status> {
    if (service !== "" && !deps.serviceNames().includes(service)) throw errors.notFound("HEALTH-unkn", `unknown service "${service}"`);
    return (await deps.ready()) ? Status.SERVING : Status.NOT_SERVING;
  }
  return {
    async check(req) {
      return create(HealthCheckResponseSchema, { status: await status(req.service) });
    },
    async list() {
      const serving = await status("");
      const statuses = Object.fromEntries(["", ...deps.serviceNames()].map((n) => [n, create(HealthCheckResponseSchema, { status: serving })]));
      return create(HealthListResponseSchema, { statuses });
    },
    async *watch(req, ctx) {
      let last: Status | undefined;
      while (!ctx.signal.aborted) {
        const s = await status(req.service).catch(() => Status.SERVICE_UNKNOWN);
        if (s !== last) yield create(HealthCheckResponseSchema, { status: s });
        last = s;
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 5000);
          ctx.signal.addEventListener(
            "abort",
            () => {
              clearTimeout(t);
              resolve();
            },
            { once: true },
          );
        });
      }
    },
  };
}
