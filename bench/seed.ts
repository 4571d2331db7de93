// Seeds a data dir before the bench server starts: targets appended through the event store (real events,
// real projections), 500 per transaction so that 10,000 take seconds, not minutes.
import { registerProjections } from "../src/projections/index.js";
import { gitlabIdpAdded, humanAdded, targetAdded } from "../src/events/index.js";
import { orgAddedEvent, orgDomain } from "../src/command/orgs.js";
import { SecretBox } from "../src/crypto/secrets.js";
import { loadMasterKey } from "../src/storage/masterkey.js";
import { EventStore } from "../src/eventstore/eventstore.js";
import { newId } from "../src/ids.js";
import { openDatabase } from "../src/storage/database.js";

const [dataDir, count] = [process.env.SVC_DATA_DIR!, Number(process.env.SEED_TARGETS ?? 10_000)];
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir });
const es = new EventStore(db);
registerProjections(es);
const box = new SecretBox(await loadMasterKey(db, process.env.SVC_MASTERKEY, dataDir));
const instance = await db.prisma.instance.findFirstOrThrow();
for (let done = 0; done < count; done += 500) {
  await es.execute((w) =>
    w.push(
      instance.id,
      "bench",
      Array.from({ length: Math.min(500, count - done) }, (_, i) =>
        targetAdded.event(
          { aggregateId: newId(), resourceOwner: instance.id },
          {
            name: `seed-${done + i}`,
            targetType: i % 2 ? "rest_webhook" : "rest_request_response",
            url: `https://seed${done + i}.example.com/hook`,
            timeoutMs: 1000 + (i % 10) * 100,
            isAsync: i % 3 === 0,
            interruptOnError: i % 3 === 1,
            signingKey: box.seal("seed"),
          },
        ),
      ),
    ),
  );
}
console.log(`seeded ${count} targets`);

// Identity providers: IDP_ORGS organisations with IDPS / IDP_ORGS providers each.
const idpCount = Number(process.env.SEED_IDPS ?? 10_000);
const orgCount = Number(process.env.SEED_IDP_ORGS ?? 100);
const orgIds: string[] = [];
await es.execute((w) =>
  w.push(
    instance.id,
    "bench",
    Array.from({ length: orgCount }, (_, i) => {
      const id = newId();
      orgIds.push(id);
      return orgAddedEvent(id, `bench-org-${i}`, orgDomain(`bench-org-${i}`, "localhost"));
    }),
  ),
);
for (let done = 0; done < idpCount; done += 500) {
  await es.execute((w) =>
    w.push(
      instance.id,
      "bench",
      Array.from({ length: Math.min(500, idpCount - done) }, (_, i) => {
        const n = done + i;
        const orgId = orgIds[n % orgCount]!;
        return gitlabIdpAdded.event(
          { aggregateId: newId(), resourceOwner: orgId },
          {
            name: `idp-${n}`,
            options: {},
            clientId: `client-${n}`,
            scopes: ["openid"],
            ownerType: "org",
            ownerId: orgId,
            ownerPolicy: n % 4 ? "activate" : "deactivate",
          },
        );
      }),
    ),
  );
}
console.log(`seeded ${idpCount} identity providers over ${orgCount} organisations`);

// Users: SEED_USERS humans spread over the same organisations.
const userCount = Number(process.env.SEED_USERS ?? 100_000);
for (let done = 0; done < userCount; done += 1000) {
  await es.execute((w) =>
    w.push(
      instance.id,
      "bench",
      Array.from({ length: Math.min(1000, userCount - done) }, (_, i) => {
        const n = done + i;
        const orgId = orgIds[n % orgCount]!;
        return humanAdded.event(
          { aggregateId: newId(), resourceOwner: orgId },
          {
            username: `user-${n}`,
            givenName: `Given${n}`,
            familyName: `Family${n % 997}`,
            displayName: `Given${n} Family${n % 997}`,
            email: `user-${n}@example.com`,
            emailVerified: true,
          },
        );
      }),
    ),
  );
}
console.log(`seeded ${userCount} users over ${orgCount} organisations`);
console.log(`first org ${orgIds[0]}`);
// Statistics and visibility maps for the planner and index-only scans (autovacuum may be off, or not yet run).
await db.pool.query("VACUUM (ANALYZE)");
console.log("vacuumed and analysed");
await db.close();
