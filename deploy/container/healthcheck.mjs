// The container's health check (Containerfile HEALTHCHECK, compose.yaml): exit 0 when this server's /readyz
// answers 200, that is when it serves and its database answers; 1 otherwise. It asks the server's own port on
// the loopback address, over TLS when SVC_TLS_CERT is set (the certificate is for the public name, so it is
// not verified here: the check is of this process, not of the certificate). Node alone: the image has no curl.
import http from "node:http";
import https from "node:https";

const port = Number(process.env.SVC_PORT || 8080);
const host = ["", "0.0.0.0", "::"].includes(process.env.SVC_HOST ?? "") ? "127.0.0.1" : process.env.SVC_HOST;
const tls = Boolean(process.env.SVC_TLS_CERT);
const req = (tls ? https : http).get(
  { host, port, path: "/readyz", timeout: 4000, rejectUnauthorized: false, headers: { host: `localhost:${port}` } },
  (res) => {
    res.resume();
    process.exit(res.statusCode === 200 ? 0 : 1);
  },
);
req.on("timeout", () => req.destroy(new Error("timed out")));
req.on("error", (err) => {
  console.error(`health check: ${err.message}`);
  process.exit(1);
});
