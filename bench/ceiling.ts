// The ceilings: a bare Fastify route that returns the JSON ResolveLanguages returns, nothing else; and one that
// only signs an RS256 JWT with node:crypto (the token endpoints' ceiling: the same algorithm, no storage).
import { generateKeyPairSync, randomUUID, sign } from "node:crypto";
import Fastify from "fastify";

const body = JSON.parse(process.env.CEILING_BODY ?? "{}");
const app = Fastify({ logger: false });
app.get("/settings/v3alpha/languages", async () => body);
app.patch("/settings/v3alpha/languages", async () => body);
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const head = Buffer.from(JSON.stringify({ alg: "RS256", typ: "at+jwt", kid: "ceiling" })).toString("base64url");
app.post("/token", async () => {
  const now = Math.floor(Date.now() / 1000);
  const body64 = Buffer.from(
    JSON.stringify({ iss: "http://127.0.0.1", sub: "ceiling", aud: ["svc"], iat: now, exp: now + 43_200, jti: randomUUID() }),
  ).toString("base64url");
  const signature = sign("RSA-SHA256", Buffer.from(`${head}.${body64}`), privateKey).toString("base64url");
  return { access_token: `${head}.${body64}.${signature}`, token_type: "Bearer", expires_in: 43_200 };
});
// A webhook target for the execution benchmark: answers at once.
app.post("/hook", async () => ({}));
await app.listen({ port: 0, host: "127.0.0.1" });
const addr = app.server.address();
console.log(`ceiling listening on http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`);
process.on("SIGTERM", () => void app.close().then(() => process.exit(0)));
