// The ceiling: a bare Fastify route that returns the JSON ResolveLanguages returns, nothing else.
import Fastify from "fastify";

const body = JSON.parse(process.env.CEILING_BODY ?? "{}");
const app = Fastify({ logger: false });
app.get("/settings/v3alpha/languages", async () => body);
app.patch("/settings/v3alpha/languages", async () => body);
// A webhook target for the execution benchmark: answers at once.
app.post("/hook", async () => ({}));
await app.listen({ port: 0, host: "127.0.0.1" });
const addr = app.server.address();
console.log(`ceiling listening on http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`);
process.on("SIGTERM", () => void app.close().then(() => process.exit(0)));
