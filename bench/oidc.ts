// OIDC endpoints side by side with oidc-provider in the same run: client credentials, JWT assertions, introspection
// and userinfo. Both keep secrets their own way (we: scrypt hashes with a short in-memory verification cache;
// oidc-provider: the plain secret), both issue opaque access tokens.
import { createPrivateKey, randomUUID, sign, type KeyObject } from "node:crypto";
import { cpuDuring } from "./cpu.js";
import { httpLoad, startProcess, type Result } from "./load.js";
import { pacedWrites } from "./writes.js";

const form = "application/x-www-form-urlencoded";
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

/** n RS256 JWT assertions with unique jti, made before the run so that signing does not load the machine during it. */
function assertions(n: number, claims: { iss: string; sub: string; aud: string }, kid: string, key: KeyObject): string[] {
  const head = Buffer.from(JSON.stringify({ alg: "RS256", kid })).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  return Array.from({ length: n }, () => {
    const body = Buffer.from(JSON.stringify({ ...claims, jti: randomUUID(), iat: now, exp: now + 3600 })).toString("base64url");
    return `${head}.${body}.${sign("RSA-SHA256", Buffer.from(`${head}.${body}`), key).toString("base64url")}`;
  });
}

/**
 * Runs the load against a body that changes per request. Single-use bodies (assertions) go once each: a
 * second use is a replay, refused (counted as an error, not as throughput); reusable ones rotate.
 */
function rotating(url: string, bodies: string[], headers: Record<string, string>, seconds: number, name: string, reusable = false) {
  let i = 0;
  return httpLoad(name, {
    url,
    method: "POST",
    headers: { "content-type": form, ...headers },
    requests: [{ method: "POST", setupRequest: (req) => ({ ...req, body: bodies[i++ % bodies.length] }) }],
    duration: seconds,
    ...(reusable ? {} : { amount: bodies.length }),
  });
}

/**
 * What the OIDC figures call with: a machine user with a client secret and a key, an API application (basic auth)
 * of a new project, and a client-credentials access token for that project, which the application introspects.
 */
export async function introspectionFixture(server: string, pat: string) {
  const api = async (path: string, body: unknown = {}) => {
    const r = await fetch(`${server}/resources/v3alpha${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${pat}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const m = await api("/users", { username: "bench-machine", machine: { name: "Bench machine" } });
  const secret = (await api(`/users/${m.details.id}/_generate_secret`)).clientSecret;
  const keyFile = JSON.parse((await api(`/users/${m.details.id}/keys`)).keyContent);
  const project = await api("/projects", { name: "bench-api" });
  const app = await api(`/projects/${project.details.id}/applications`, { name: "bench-rs", api: { authMethodType: "API_AUTH_METHOD_TYPE_BASIC" } });
  const token = async (body: string) =>
    (
      await (
        await fetch(`${server}/oauth/v2/token`, { method: "POST", headers: { "content-type": form, authorization: basic("bench-machine", secret) }, body })
      ).json()
    ).access_token as string;
  const forApi = await token(`grant_type=client_credentials&scope=${encodeURIComponent(`urn:svc:iam:org:project:id:${project.details.id}:aud`)}`);
  return {
    api,
    machine: m,
    project,
    secret,
    keyFile,
    app,
    forApi,
    introspect: { authorization: basic(app.clientId, app.clientSecret), body: `token=${forApi}` },
  };
}

export async function oidcBench(
  server: string,
  serverPid: number,
  pat: string,
  seconds: number,
  ceiling: string,
): Promise<{ results: Result[]; lines: string[]; introspectionCpuMs: { alone: number; beside: number } }> {
  const { api, machine: m, project, secret, keyFile, app, forApi } = await introspectionFixture(server, pat);
  const ourKey = createPrivateKey(keyFile.key);
  const ours = (n: number) => assertions(n, { iss: keyFile.userId, sub: keyFile.userId, aud: server }, keyFile.keyId, ourKey);
  const firstJwt = ours(1)[0]!;
  const userToken = (
    await (
      await fetch(`${server}/oauth/v2/token`, {
        method: "POST",
        headers: { "content-type": form },
        body: `grant_type=${encodeURIComponent("urn:ietf:params:oauth:grant-type:jwt-bearer")}&scope=openid%20profile&assertion=${firstJwt}`,
      })
    ).json()
  ).access_token;

  const peerProc = await startProcess(["bench/oidc-peer.ts"], {}, /listening on (http:\/\/\S+)/);
  const out: Result[] = [];
  const lines: string[] = [];
  // The server's CPU per introspection alone and with the paced writes beside (the writes' own CPU taken away), ms.
  const introspectionCpuMs = { alone: Number.NaN, beside: Number.NaN };
  try {
    // The peer prints its secret, key and user token on the line before its URL.
    const peerInfo = JSON.parse(peerProc.output.split("\n").find((l) => l.startsWith("{"))!) as { userToken: string; secret: string; privateKeyPem: string };
    const peer = peerProc.url;
    const peerAuth = basic("machine", peerInfo.secret);
    const peerToken = (
      await (
        await fetch(`${peer}/token`, { method: "POST", headers: { "content-type": form, authorization: peerAuth }, body: "grant_type=client_credentials" })
      ).json()
    ).access_token;
    const expectOk = async (what: string, res: Promise<Response>, check: (body: any) => boolean) => {
      const r = await res;
      const body = await r.json();
      if (!r.ok || !check(body)) throw new Error(`${what} answered ${r.status} ${JSON.stringify(body)}`);
    };
    await expectOk("peer userinfo", fetch(`${peer}/me`, { headers: { authorization: `Bearer ${peerInfo.userToken}` } }), (b) => b.sub === "bench-user");
    await expectOk(
      "peer introspection",
      fetch(`${peer}/token/introspection`, { method: "POST", headers: { "content-type": form, authorization: peerAuth }, body: `token=${peerToken}` }),
      (b) => b.active === true,
    );
    await expectOk("our userinfo", fetch(`${server}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${userToken}` } }), (b) => !!b.sub);
    await expectOk(
      "our introspection",
      fetch(`${server}/oauth/v2/introspect`, {
        method: "POST",
        headers: { "content-type": form, authorization: basic(app.clientId, app.clientSecret) },
        body: `token=${forApi}`,
      }),
      (b) => b.active === true,
    );
    const n = Math.max(6000, seconds * 5000);
    out.push(await httpLoad("ceiling: bare route signing an RS256 JWT", { url: `${ceiling}/token`, method: "POST", duration: seconds }));

    // oidc-provider's in-memory store keeps the newest 1,000 artifacts: the calls that read a stored token run first,
    // before client credentials fill the store, and each response is checked to be a real answer.
    out.push(await httpLoad("userinfo: ours", { url: `${server}/oidc/v1/userinfo`, headers: { authorization: `Bearer ${userToken}` }, duration: seconds }));
    out.push(await httpLoad("userinfo: oidc-provider", { url: `${peer}/me`, headers: { authorization: `Bearer ${peerInfo.userToken}` }, duration: seconds }));
    const introspect = {
      url: `${server}/oauth/v2/introspect`,
      method: "POST" as const,
      headers: { "content-type": form, authorization: basic(app.clientId, app.clientSecret) },
      body: `token=${forApi}`,
      duration: seconds,
    };
    const aloneRun = await cpuDuring(serverPid, () => httpLoad("introspection: ours", introspect));
    out.push(aloneRun.value);
    // The same with writes beside it: each write commits an event, which must not empty what introspection reads.
    let n0 = 0;
    const createTarget = async () => {
      const r = await fetch(`${server}/resources/v3alpha/targets`, {
        method: "POST",
        headers: { authorization: `Bearer ${pat}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `beside-${process.pid}-${n0++}`, restWebhook: { url: "https://example.com/h" }, timeout: "5s" }),
      });
      await r.arrayBuffer();
      return r.ok;
    };
    // A long-running server has run the write path often: V8 optimises a function called once per write only
    // after thousands of calls (measured: server CPU per paced write fell from 5.3 to 3.1 ms over the first
    // 3,600 writes), so the writes are warmed before they are measured, as the reads were by the runs above.
    const warmStart = performance.now();
    let warmed = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (warmed < 3000) if (await createTarget()) warmed++;
      }),
    );
    lines.push(`write path warmed with ${warmed} CreateTarget calls, 50 at a time, in ${((performance.now() - warmStart) / 1000).toFixed(1)} s`);
    // What the warm-up left behind (projections, subscriptions, garbage) settles before the writes' own cost is measured.
    await new Promise((r) => setTimeout(r, 2000));
    // First the writes alone, on an idle server: what each costs every process when nothing competes.
    const idle = await cpuDuring(serverPid, async () => {
      const paced = pacedWrites(100, createTarget);
      await new Promise((r) => setTimeout(r, Math.min(seconds, 5) * 1000));
      const counts = paced.stop();
      // the last writes still running finish inside the measurement
      await new Promise((r) => setTimeout(r, 300));
      return counts;
    });
    const idleWrites = idle.value.sent - idle.value.failed;
    lines.push(
      `CPU ms per CreateTarget at 100/s on an idle server: server ${((idle.server * 1000) / idleWrites).toFixed(3)}, ` +
        `PostgreSQL ${((idle.postgres * 1000) / idleWrites).toFixed(3)}, load generator ${((idle.self * 1000) / idleWrites).toFixed(3)}`,
    );
    const writes = pacedWrites(100, createTarget);
    const besideRun = await cpuDuring(serverPid, () => httpLoad("introspection, 100 writes/s beside", introspect));
    const written = writes.stop();
    const besideWrites = besideRun.value;
    besideWrites.name = `introspection, ${Math.round((written.sent - written.failed) / seconds)} writes/s beside`;
    out.push(besideWrites);
    // Where the cycles of the run with writes went: what the introspections cost alone is taken away, per write.
    const per = (cpu: number, n: number) => ((cpu * 1000) / Math.max(1, n)).toFixed(3);
    const counts = { alone: aloneRun.value.rps * seconds, beside: besideWrites.rps * seconds, writes: written.sent - written.failed };
    introspectionCpuMs.alone = (aloneRun.server * 1000) / Math.max(1, counts.alone);
    // The goal counts what the writes make each introspection cost, not the writes' own share of the cores: what
    // the same writes cost the server on its own (measured above, idle) is taken away first.
    const writesOwn = (idle.server / Math.max(1, idleWrites)) * counts.writes;
    // Below zero the idle figure was no measure of the writes (the idle run disturbed): no figure, not a pass.
    introspectionCpuMs.beside = besideRun.server > writesOwn ? ((besideRun.server - writesOwn) * 1000) / Math.max(1, counts.beside) : Number.NaN;
    lines.push(
      `server CPU ms per introspection with writes beside, the writes' own CPU (${per(writesOwn, counts.writes)} ms each, idle) taken away: ` +
        `${introspectionCpuMs.beside.toFixed(3)} (alone ${introspectionCpuMs.alone.toFixed(3)})`,
    );
    for (const [what, key] of [
      ["server", "server"],
      ["PostgreSQL", "postgres"],
      ["load generator", "self"],
    ] as const) {
      const aloneEach = aloneRun[key] / Math.max(1, counts.alone);
      const extra = besideRun[key] - aloneEach * counts.beside;
      lines.push(
        `CPU ms per introspection, ${what}: alone ${per(aloneRun[key], counts.alone)}, with writes ${per(besideRun[key], counts.beside)}; ` +
          `left per write ${per(extra, counts.writes)}`,
      );
    }
    out.push(
      await httpLoad("introspection: oidc-provider", {
        url: `${peer}/token/introspection`,
        method: "POST",
        headers: { "content-type": form, authorization: peerAuth },
        body: `token=${peerToken}`,
        duration: seconds,
      }),
    );

    out.push(
      await httpLoad("client_credentials: ours", {
        url: `${server}/oauth/v2/token`,
        method: "POST",
        headers: { "content-type": form, authorization: basic("bench-machine", secret) },
        body: "grant_type=client_credentials",
        duration: seconds,
      }),
    );
    // Token exchange (RFC 8693) next to client credentials: a machine's token for the project exchanged by an
    // application of the project for an opaque one; and the machine acting for one of 50 users in turn (each
    // exchange writes user.impersonated on that user: impersonations of one user queue on its lock).
    const subjects = await Promise.all(
      Array.from({ length: 50 }, (_, i) => api("/users", { username: `bench-subject-${i}`, machine: { name: "Bench subject" } })),
    );
    const te = await api(`/projects/${project.details.id}/applications`, {
      name: "bench-exchange",
      oidc: { grantTypes: ["OIDC_GRANT_TYPE_TOKEN_EXCHANGE"], appType: "OIDC_APP_TYPE_WEB", authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC" },
    });
    const send = (path: string, method: string, body: unknown) =>
      fetch(`${server}${path}`, { method, headers: { authorization: `Bearer ${pat}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    await send("/v2/features/instance", "PUT", { oidcTokenExchange: true });
    await send("/settings/v3alpha/security", "PATCH", { enableImpersonation: { set: true } });
    await api("/memberships", { userId: m.details.id, context: { instance: true }, roles: ["IAM_END_USER_IMPERSONATOR"] });
    const grant = encodeURIComponent("urn:ietf:params:oauth:grant-type:token-exchange");
    const accessType = encodeURIComponent("urn:ietf:params:oauth:token-type:access_token");
    const userIdType = encodeURIComponent("urn:svc:params:oauth:token-type:user_id");
    const exchangeAuth = { authorization: basic(te.clientId, te.clientSecret) };
    const exchanges: [string, string[]][] = [
      ["token exchange: ours", [`grant_type=${grant}&subject_token=${forApi}&subject_token_type=${accessType}`]],
      [
        "token exchange, impersonating 50 users: ours",
        subjects.map(
          (u) => `grant_type=${grant}&subject_token=${u.details.id}&subject_token_type=${userIdType}&actor_token=${forApi}&actor_token_type=${accessType}`,
        ),
      ],
    ];
    for (const [name, bodies] of exchanges) {
      const first = fetch(`${server}/oauth/v2/token`, { method: "POST", headers: { "content-type": form, ...exchangeAuth }, body: bodies[0] });
      await expectOk(name, first, (b) => typeof b.access_token === "string");
      out.push(await rotating(`${server}/oauth/v2/token`, bodies, exchangeAuth, seconds, name, true));
    }
    out.push(
      await httpLoad("client_credentials: oidc-provider", {
        url: `${peer}/token`,
        method: "POST",
        headers: { "content-type": form, authorization: peerAuth },
        body: "grant_type=client_credentials",
        duration: seconds,
      }),
    );

    const ourBodies = ours(n).map((a) => `grant_type=${encodeURIComponent("urn:ietf:params:oauth:grant-type:jwt-bearer")}&assertion=${a}`);
    out.push(await rotating(`${server}/oauth/v2/token`, ourBodies, {}, seconds, "JWT profile grant: ours"));
    const peerKey = createPrivateKey(peerInfo.privateKeyPem);
    const peerBodies = assertions(n, { iss: "jwt-machine", sub: "jwt-machine", aud: "http://127.0.0.1" }, "bench", peerKey).map(
      (a) =>
        `grant_type=client_credentials&client_assertion_type=${encodeURIComponent("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")}&client_assertion=${a}`,
    );
    out.push(await rotating(`${peer}/token`, peerBodies, {}, seconds, "JWT assertion (private_key_jwt): oidc-provider"));
  } finally {
    peerProc.child.kill("SIGTERM");
  }
  return { results: out, lines, introspectionCpuMs };
}
