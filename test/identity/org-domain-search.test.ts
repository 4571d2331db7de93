import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// SearchOrganizationDomains' `domain_contains` is text to find, not a LIKE pattern: `_` and `%` match themselves
// (src/query/org-domains.ts), as in every other search.
let t: TestServer;
let org: string;
beforeAll(async () => {
  t = await startTestServer();
  org = await t.org("Wildcards");
  for (const domain of ["abc.example", "a-c.example", "xyz.example"]) {
    const r = await rest(t.url, "POST", `/resources/v3alpha/organizations/${org}/domains`, { token: t.adminPat, body: { domain } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
});
afterAll(() => t?.close());

async function found(domainContains: string): Promise<string[]> {
  const r = await rest(t.url, "POST", `/resources/v3alpha/organizations/${org}/domains/_search`, {
    token: t.adminPat,
    body: { domainContains, query: { asc: true } },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(BigInt(r.body.details.totalResult ?? 0)).toBe(BigInt(r.body.result?.length ?? 0));
  return ((r.body.result ?? []) as { domain: string }[]).map((d) => d.domain).sort();
}

describe("organisation domain search", () => {
  it("finds the text it is given, in any case", async () => {
    expect(await found("BC.EX")).toEqual(["abc.example"]);
    expect(await found("a-c")).toEqual(["a-c.example"]);
    expect(await found(".example")).toEqual(["a-c.example", "abc.example", "xyz.example"]);
  });

  it("treats % and _ as themselves, not as wildcards", async () => {
    // As LIKE patterns, "a_c" would match abc and a-c, and "%" or "x%z" every domain or xyz.
    expect(await found("a_c")).toEqual([]);
    expect(await found("%")).toEqual([]);
    expect(await found("x%z")).toEqual([]);
    expect(await found("_")).toEqual([]);
  });
});
