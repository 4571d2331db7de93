import { ConfigError } from "./startup-error.js";

/**
 * Tracing as the standard OpenTelemetry variables ask for it. They are the environment's, not ours (an
 * operator sets them for every service alike), so they are read from the environment only, not from the YAML
 * file, and are not in `variables.ts`. Tracing is on when `OTEL_TRACES_EXPORTER` names an exporter or an OTLP
 * endpoint is set, and off with `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. The SDK reads the
 * others itself (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER[_ARG]`, `OTEL_BSP_*`,
 * `OTEL_EXPORTER_OTLP[_TRACES]_HEADERS`, `_TIMEOUT`, `_COMPRESSION`).
 */
export interface TracingConfig {
  /** Where spans go: OTLP over HTTP, standard output, or both. */
  exporters: ("otlp" | "console")[];
  /** The OTLP/HTTP traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  endpoint: string;
  /** `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`; http/protobuf by default, as the specification says. */
  protocol: "http/protobuf" | "http/json";
}

type Env = Record<string, string | undefined>;

const PROTOCOLS = ["http/protobuf", "http/json"] as const;
const EXPORTERS = ["otlp", "console"] as const;

function read(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

/** The tracing the OTEL_* variables of `env` ask for, or undefined for none. */
export function tracingFromEnv(env: Env): TracingConfig | undefined {
  if (read(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const named = read(env, "OTEL_TRACES_EXPORTER");
  const tracesEndpoint = read(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const baseEndpoint = read(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (named === undefined && tracesEndpoint === undefined && baseEndpoint === undefined) return undefined;
  const names = (named ?? "otlp")
    .split(",")
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  if (names.includes("none")) return undefined;
  const exporters: TracingConfig["exporters"] = [];
  for (const n of names) {
    const known = EXPORTERS.find((e) => e === n);
    if (!known) throw new ConfigError(`OTEL_TRACES_EXPORTER: "${n}" is not supported; use otlp, console or none`);
    if (!exporters.includes(known)) exporters.push(known);
  }
  const protocolVariable = read(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const givenProtocol = read(env, protocolVariable) ?? "http/protobuf";
  const protocol = PROTOCOLS.find((p) => p === givenProtocol.toLowerCase());
  const endpoint = tracesEndpoint ?? (baseEndpoint ? `${baseEndpoint.replace(/\/+$/, "")}/v1/traces` : "http://localhost:4318/v1/traces");
  if (exporters.includes("otlp")) {
    if (!protocol) {
      throw new ConfigError(
        `${protocolVariable} "${givenProtocol}" is not supported; use http/protobuf (the default) or http/json, to the collector's OTLP/HTTP port (4318)`,
      );
    }
    const variable = tracesEndpoint ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      throw new ConfigError(`${variable} must be an http:// or https:// URL, e.g. http://collector:4318, got "${tracesEndpoint ?? baseEndpoint}"`);
    }
  }
  return { exporters, endpoint, protocol: protocol ?? "http/protobuf" };
}
