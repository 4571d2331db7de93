// A search's REST answer written two ways, in process, per page of 100 users (issue 12, point 3: does protobuf's
// serialisation dominate?). "protobuf": what the server does, the converter builds messages (`toGetUser`) and
// `toJsonString` writes protobuf's canonical JSON. "direct": the floor of writing the same text without messages,
// plain objects straight from the rows and `JSON.stringify`. Both must give the same text, or the bench fails.
import { create, toJsonString } from "@bufbuild/protobuf";
import { SearchUsersResponseSchema } from "../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { toGetUser } from "../src/api/user/convert.js";
import { jsonWriter, SERVER_JSON_WRITE } from "../src/schema/json-writer.js";
import type { UserView } from "../src/query/users.js";

/** Rows as the seed's users come from the database (bench/seed.ts). */
function rows(): UserView[] {
  return Array.from({ length: 100 }, (_, n) => ({
    id: String(117681617591093975n + BigInt(n)),
    orgId: "117681617591093000",
    username: `user-${n}`,
    kind: "human",
    state: "initial",
    displayName: `Given${n} Family${n % 997}`,
    givenName: `Given${n}`,
    familyName: `Family${n % 997}`,
    nickName: null,
    preferredLanguage: "en",
    email: `user-${n}@example.com`,
    emailVerified: n % 2 === 0,
    phone: n % 3 === 0 ? `+4179000${String(n).padStart(4, "0")}` : null,
    phoneVerified: false,
    passwordChangeRequired: n % 5 === 0,
    passwordChanged: n % 4 === 0 ? new Date(Date.UTC(2026, 10, 1, 0, 0, n)) : null,
    description: null,
    accessTokenType: "opaque",
    secretHash: null,
    schemaId: null,
    schemaRevision: null,
    data: null,
    sequence: 1 + (n % 3),
    changeDate: new Date(Date.UTC(2026, 10, 2, 0, 0, 0, n * 7)),
  })) as UserView[];
}

/** A timestamp as protobuf's JSON writes it: no fraction when there is none. */
const timestamp = (d: Date) => {
  const iso = d.toISOString();
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
};

/** The same JSON as the converter's message, written from the row (proto3: empty strings and false are left out). */
function direct(u: UserView) {
  const profile: Record<string, string> = {};
  if (u.givenName) profile.givenName = u.givenName;
  if (u.familyName) profile.familyName = u.familyName;
  if (u.nickName) profile.nickName = u.nickName;
  if (u.displayName) profile.displayName = u.displayName;
  if (u.preferredLanguage) profile.preferredLanguage = u.preferredLanguage;
  const human: Record<string, unknown> = { profile, email: u.emailVerified ? { address: u.email, isVerified: true } : { address: u.email } };
  if (u.phone) human.phone = u.phoneVerified ? { number: u.phone, isVerified: true } : { number: u.phone };
  if (u.passwordChangeRequired) human.passwordChangeRequired = true;
  if (u.passwordChanged) human.passwordChanged = timestamp(u.passwordChanged);
  return {
    details: { id: u.id, sequence: String(u.sequence), changeDate: timestamp(u.changeDate), resourceOwner: { type: "OWNER_TYPE_ORG", id: u.orgId } },
    state: "USER_STATE_INITIAL",
    username: u.username,
    human,
  };
}

function timePerPage(pages: number, write: () => string): number {
  for (let i = 0; i < 300; i++) write();
  const start = process.hrtime.bigint();
  for (let i = 0; i < pages; i++) write();
  return Number(process.hrtime.bigint() - start) / pages / 1000;
}

export function serializationBench(pages = 3000): string[] {
  const page = rows();
  const protobuf = () => toJsonString(SearchUsersResponseSchema, create(SearchUsersResponseSchema, { result: page.map(toGetUser) }));
  const plain = () => JSON.stringify({ result: page.map(direct) });
  if (protobuf() !== plain()) throw new Error("serialization bench: the direct JSON differs from protobuf's");
  // Alternate, so that drift hits both alike.
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < 3; round++) {
    a.push(timePerPage(pages, protobuf));
    b.push(timePerPage(pages, plain));
  }
  const median = (x: number[]) => x.sort((p, q) => p - q)[1]!;
  return [
    `REST answer of a 100-user page, in process: protobuf (messages + canonical JSON) ${median(a).toFixed(0)} µs, direct JSON from the rows ${median(b).toFixed(0)} µs (protobuf / direct = ${(median(a) / median(b)).toFixed(2)})`,
  ];
}

/**
 * The REST gateway's answer writer (issue 31): `toJsonString` with the server's options, as connect-es writes
 * a Connect JSON answer and the gateway wrote REST answers, against the compiled writer (src/schema/json-writer.ts)
 * on the same messages, a SearchUsers answer of 1 and of 100 users. Same run, alternated; the texts must be equal.
 * Alone: `node --import tsx bench/serialization.ts`.
 */
export function jsonWriterBench(ms = 300): string[] {
  const write = jsonWriter(SearchUsersResponseSchema, SERVER_JSON_WRITE);
  const lines: string[] = [];
  for (const users of [1, 100]) {
    const message = create(SearchUsersResponseSchema, { result: rows().slice(0, users).map(toGetUser) });
    if (toJsonString(SearchUsersResponseSchema, message, SERVER_JSON_WRITE) !== write(message))
      throw new Error("serialization bench: the compiled writer's JSON differs from protobuf-es's");
    // As sent: the text encoded to UTF-8 (which also flattens the writer's concatenated string).
    const tree = () => Buffer.from(toJsonString(SearchUsersResponseSchema, message, SERVER_JSON_WRITE));
    const compiled = () => Buffer.from(write(message));
    const opsPerSecond = (f: () => Buffer) => {
      for (let i = 0; i < 200; i++) f();
      let n = 0;
      const start = process.hrtime.bigint();
      const until = start + BigInt(ms) * 1_000_000n;
      let now = start;
      while (now < until) {
        for (let i = 0; i < 50; i++) f();
        n += 50;
        now = process.hrtime.bigint();
      }
      return n / (Number(now - start) / 1e9);
    };
    const a: number[] = [];
    const b: number[] = [];
    // Alternated in short windows, so that the load of a shared machine hits both alike.
    for (let round = 0; round < 9; round++) {
      a.push(opsPerSecond(tree));
      b.push(opsPerSecond(compiled));
    }
    const median = (x: number[]) => x.sort((p, q) => p - q)[4]!;
    const [ta, tb] = [median(a), median(b)];
    lines.push(
      `SearchUsers answer, ${users} user${users === 1 ? "" : "s"} (${tree().byteLength} bytes), in process: toJsonString ${ta.toFixed(0)} ops/s (${(1e6 / ta).toFixed(1)} µs), compiled writer ${tb.toFixed(0)} ops/s (${(1e6 / tb).toFixed(1)} µs), ${(tb / ta).toFixed(2)}x`,
    );
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of [...jsonWriterBench(), ...serializationBench()]) console.log(line);
}
