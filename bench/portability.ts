// Export and import of many users (issue 15): seconds and peak RSS of each phase, for the closing note.
//   node --import tsx bench/portability.ts            (embedded PostgreSQL; 10,000 users)
//   BENCH_USERS=100000 TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx bench/portability.ts
// Server A gets the users through POST /admin/v1/import, exports them (with passwords) through POST
// /admin/v1/export, and server B imports the export. Both servers run in this process, so the RSS is theirs.
import { pbkdf2Sync } from "node:crypto";
import { rest } from "../test/support/clients.js";
import { startTestServer } from "../test/support/server.js";

const users = Number(process.env.BENCH_USERS ?? 10_000);
// One hash for all: computing 10,000 pbkdf2 hashes would measure pbkdf2, not the import.
const hash = `$pbkdf2-sha256$27500$${Buffer.from("bench-salt-16byt").toString("base64")}$${pbkdf2Sync("Bench-passw0rd", "bench-salt-16byt", 27500, 32, "sha256").toString("base64")}`;

let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 20);
const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`;

async function phase<T>(name: string, run: () => Promise<T>): Promise<T> {
  peak = process.memoryUsage().rss;
  const start = performance.now();
  const out = await run();
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(`${name.padEnd(28)} ${((performance.now() - start) / 1000).toFixed(2).padStart(8)} s   peak RSS ${mb(peak)}`);
  return out;
}

// the real cost of password hashes (the suite's servers use a cheap one)
const real = { SVC_PASSWORD_HASH_COST: "15" };
const [a, b] = await Promise.all([startTestServer(real), startTestServer(real)]);
try {
  const orgId = "77000000";
  const humanUsers = Array.from({ length: users }, (_, i) => ({
    userId: String(77_000_001 + i),
    user: {
      userName: `bench-${i}`,
      profile: { firstName: "Bench", lastName: `User ${i}` },
      email: { email: `bench-${i}@example.com`, isEmailVerified: true },
      hashedPassword: { value: hash },
    },
  }));
  const body = JSON.stringify({ data_orgs: { orgs: [{ orgId, org: { name: "Bench" }, humanUsers }] }, timeout: "60m" });
  console.log(`${users} users, import body ${mb(body.length)}`);
  const seeded = await phase("import into A (body)", () => rest(a.url, "POST", "/admin/v1/import", { token: a.adminPat, body }));
  if (seeded.status !== 200 || seeded.body.errors.length) throw new Error(`seeding: ${seeded.status} ${JSON.stringify(seeded.body).slice(0, 500)}`);
  const exported = await phase("export from A (response)", () =>
    rest(a.url, "POST", "/admin/v1/export", { token: a.adminPat, body: { org_ids: [orgId], with_passwords: true, response_output: true, timeout: "60m" } }),
  );
  if (exported.body.orgs[0].humanUsers.length !== users) throw new Error("the export misses users");
  const local = await phase("export from A (local file)", () =>
    rest(a.url, "POST", "/admin/v1/export", {
      token: a.adminPat,
      body: { org_ids: [orgId], with_passwords: true, local_output: { path: "bench.json" }, timeout: "60m" },
    }),
  );
  if (local.status !== 200) throw new Error(`local export: ${JSON.stringify(local.body)}`);
  const imported = await phase("import into B (export)", () =>
    rest(b.url, "POST", "/admin/v1/import", { token: b.adminPat, body: { data_orgs: exported.body, timeout: "60m" } }),
  );
  if (imported.status !== 200 || imported.body.success.orgs[0].humanUserIds.length !== users)
    throw new Error(`import: ${JSON.stringify(imported.body).slice(0, 500)}`);
  await phase("import into B again (no-op)", () =>
    rest(b.url, "POST", "/admin/v1/import", { token: b.adminPat, body: { data_orgs: exported.body, timeout: "60m" } }),
  );
  console.log(`process peak RSS (maxRSS) ${mb(process.resourceUsage().maxRSS * 1024)}`);
} finally {
  clearInterval(sampler);
  await a.close();
  await b.close();
}
