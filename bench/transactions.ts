// The cost of one write transaction in Node, by how it reaches PostgreSQL: Prisma's interactive transaction,
// the server's write transaction (a pg connection with Prisma's model API bound to it,
// src/storage/transactions.ts) and plain pg statements. Each runs BEGIN, a lookup, an insert and COMMIT on the same table,
// 20 at a time. Prints transactions/s, Node CPU per transaction and the ratios to plain pg.
// Alone: BENCH_DATABASE_URL=postgres://... node --import tsx bench/transactions.ts (part of `npm run bench`).
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../gen/prisma/client.js";
import { runTransaction, transactionBoundPrisma } from "../src/storage/transactions.js";

interface Measured {
  name: string;
  perSecond: number;
  cpuMs: number;
}

export async function transactionsBench(databaseUrl: string, count = 2000): Promise<{ lines: string[] }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const writer = transactionBoundPrisma();
  let n = 0;
  const key = () => `k-${process.pid}-${n++}`;
  const ways: [string, () => Promise<unknown>][] = [
    [
      "Prisma interactive transaction",
      () =>
        prisma.$transaction(async (tx) => {
          const k = key();
          await tx.usedJwtId.findFirst({ where: { key: k } });
          await tx.usedJwtId.create({ data: { key: k, expiresAt: new Date() } });
        }),
    ],
    [
      "write transaction, Prisma model API bound",
      () =>
        runTransaction(pool, async () => {
          const k = key();
          await writer.usedJwtId.findFirst({ where: { key: k } });
          await writer.usedJwtId.create({ data: { key: k, expiresAt: new Date() } });
        }),
    ],
    [
      "write transaction, statements on its connection",
      () =>
        runTransaction(pool, async (sql) => {
          const k = key();
          await sql.query("SELECT key, expires_at FROM used_jwt_ids WHERE key = $1", [k]);
          await sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, $2)", [k, new Date()]);
        }),
    ],
  ];
  const measure = async (name: string, run: () => Promise<unknown>): Promise<Measured> => {
    let started = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (started++ < count) await run();
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    return { name, perSecond: (count / (performance.now() - t0)) * 1000, cpuMs: (cpu.user + cpu.system) / 1000 / count };
  };
  try {
    // One round first to warm up (connections, compiled queries), then the measured one.
    for (const [name, run] of ways) await measure(name, run);
    const results: Measured[] = [];
    for (const [name, run] of ways) results.push(await measure(name, run));
    const plain = results[results.length - 1]!;
    const lines = results.map(
      (r) =>
        `${r.name.padEnd(48)} ${r.perSecond.toFixed(0).padStart(6)} tx/s  Node CPU ${r.cpuMs.toFixed(3)} ms/tx  (x${(r.cpuMs / plain.cpuMs).toFixed(2)} of plain pg)`,
    );
    return { lines };
  } finally {
    await pool.query("DELETE FROM used_jwt_ids WHERE key LIKE 'k-%'");
    await prisma.$disconnect();
    await writer.$disconnect();
    await pool.end();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.BENCH_DATABASE_URL;
  if (!url) throw new Error("set BENCH_DATABASE_URL to a database migrated by the server (it needs the used_jwt_ids table)");
  const { lines } = await transactionsBench(url, Number(process.env.BENCH_TRANSACTIONS ?? 2000));
  for (const l of lines) console.log(l);
}
