// The container's health check (Containerfile HEALTHCHECK, compose.yaml): exit 0 when this server's /readyz
// answers 200, that is when it serves and its database answers; 1 otherwise. Node alone: the image has no curl.
// It asks SVC_HEALTHCHECK_URL when that is set (e.g. https://127.0.0.1:8443/readyz: the port or TLS set in a
// `--config` file, which this separate process does not read); otherwise the server's own port (SVC_PORT) on the
// loopback address, over TLS when SVC_TLS_CERT is set. An https certificate is not verified (it is for the public
// name): the check is of this process, not of the certificate.
import http from "node:http";
import https from "node:https";

function target() {
  const given = process.env.SVC_HEALTHCHECK_URL;
  if (given) {
    const url = URL.canParse(given) ? new URL(given) : undefined;
    if (url?.protocol !== "http:" && url?.protocol !== "https:") {
      console.error(`health check: SVC_HEALTHCHECK_URL must be an http or https URL, e.g. https://127.0.0.1:8443/readyz (got "${given}")`);
      process.exit(1);
    }
    return { url, headers: {} };
  }
  const port = Number(process.env.SVC_PORT || 8080);
  const bind = process.env.SVC_HOST ?? "";
  const host = ["", "0.0.0.0", "::"].includes(bind) ? "127.0.0.1" : bind.includes(":") ? `[${bind}]` : bind;
  const url = new URL(`${process.env.SVC_TLS_CERT ? "https" : "http"}://${host}:${port}/readyz`);
  return { url, headers: { host: `localhost:${port}` } };
}

const { url, headers } = target();
const req = (url.protocol === "https:" ? https : http).get(url, { timeout: 4000, rejectUnauthorized: false, headers }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on("timeout", () => req.destroy(new Error("timed out")));
req.on("error", (err) => {
  console.error(`health check: ${err.message} (${url.href})`);
  process.exit(1);
});
