import { describe, expect, it } from "vitest";
import { permissionsAt } from "../../src/authz/permissions.js";
import { defaultRolePermissions } from "../../src/domain/roles.js";
import type { MembershipRow } from "../../src/query/tenancy.js";

/**
 * The permissions a caller holds where it acts, made once per memberships list and context (src/authz/permissions.ts):
 * the membership cache hands a user's requests the same list until a membership changes. What is kept must be
 * exactly what a fresh computation gives, per context, and a changed list must never get the old list's answer.
 */
describe("a caller's permission sets", () => {
  const instance = { type: "instance", instanceId: "i1" } as const;
  const orgA = { type: "org", instanceId: "i1", orgId: "oA" } as const;
  const orgB = { type: "org", instanceId: "i1", orgId: "oB" } as const;
  const manager: MembershipRow[] = [{ instanceId: "i1", contextType: "org", contextId: "oA", roles: ["ORG_USER_MANAGER"] }];

  it("are kept per memberships list and context, and differ by context as computed", () => {
    const first = permissionsAt({ memberships: manager }, orgA, defaultRolePermissions);
    expect(first.size).toBeGreaterThan(0);
    expect(permissionsAt({ memberships: manager }, orgA, defaultRolePermissions)).toBe(first);
    expect(permissionsAt({ memberships: manager }, orgB, defaultRolePermissions).size).toBe(0);
    expect(permissionsAt({ memberships: manager }, instance, defaultRolePermissions).size).toBe(0);
    // The same memberships in another list (what a fresh read gives): equal sets.
    expect(permissionsAt({ memberships: manager.map((m) => ({ ...m })) }, orgA, defaultRolePermissions)).toEqual(first);
  });

  it("are kept for a few hundred contexts of one list, not for every organisation a system member acts in", () => {
    const system: MembershipRow[] = [{ instanceId: "", contextType: "system", contextId: "", roles: ["SYSTEM_OWNER"] }];
    const first = permissionsAt({ memberships: system }, orgA, defaultRolePermissions);
    for (let i = 0; i < 300; i++) permissionsAt({ memberships: system }, { type: "org", instanceId: "i1", orgId: `o${i}` }, defaultRolePermissions);
    const again = permissionsAt({ memberships: system }, orgA, defaultRolePermissions);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it("of a new list (a membership added) are computed again, never the old list's", () => {
    const owner: MembershipRow[] = [...manager, { instanceId: "i1", contextType: "instance", contextId: "i1", roles: ["IAM_OWNER"] }];
    expect(permissionsAt({ memberships: manager }, orgB, defaultRolePermissions).size).toBe(0);
    const now = permissionsAt({ memberships: owner }, orgB, defaultRolePermissions);
    expect(now.size).toBeGreaterThan(permissionsAt({ memberships: manager }, orgA, defaultRolePermissions).size);
    // Another role table (a test's or a future configuration's) is not answered from the default one.
    expect(permissionsAt({ memberships: owner }, orgB, { IAM_OWNER: ["only.this"] })).toEqual(new Set(["only.this"]));
  });
});
