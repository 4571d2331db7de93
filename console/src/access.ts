// What the signed-in user may do (ListMyMemberships), and the organisation the console acts in. The console shows
// and offers only what these allow; the API still decides every call.
import { createContext, useContext } from "react";
import type { MyMembership } from "../../gen/svc/resources/membership/v3alpha/membership_service_pb.js";
import { create } from "@bufbuild/protobuf";
import { type RequestContext, RequestContextSchema } from "../../gen/svc/object/v3alpha/object_pb.js";

export interface Access {
  memberships: MyMembership[];
  /** A permission held in the whole instance (through the instance or the system). */
  everywhere(permission: string): boolean;
  /** A permission held in this organisation (or everywhere). */
  inOrg(permission: string, orgId: string): boolean;
  /** The organisations of the user's organisation memberships. */
  orgIds: string[];
  /** A permission held through a system membership (instances). */
  inSystem(permission: string): boolean;
  /** Any role that gives any permission: else the no-access page. */
  any: boolean;
}

export function accessOf(memberships: MyMembership[]): Access {
  const wide = memberships.filter((m) => m.context.case === "system" || m.context.case === "instance");
  const wideHas = (p: string) => wide.some((m) => m.permissions.includes(p));
  return {
    memberships,
    everywhere: wideHas,
    inOrg: (p, orgId) => wideHas(p) || memberships.some((m) => m.context.case === "organizationId" && m.context.value === orgId && m.permissions.includes(p)),
    orgIds: memberships.flatMap((m) => (m.context.case === "organizationId" ? [m.context.value] : [])),
    inSystem: (p) => memberships.some((m) => m.context.case === "system" && m.permissions.includes(p)),
    // an administrative role reads something; impersonation or a login UI's client role alone is not one
    any: memberships.some((m) => m.permissions.some((p) => p.endsWith(".read"))),
  };
}

export const AccessContext = createContext<Access>(accessOf([]));
export const useAccess = () => useContext(AccessContext);

export interface OrgChoice {
  orgId: string;
  setOrgId(id: string): void;
}
export const OrgContext = createContext<OrgChoice>({ orgId: "", setOrgId: () => {} });
export const useOrg = () => useContext(OrgContext);

/** The request context of the chosen organisation. */
export function orgCtx(orgId: string): RequestContext {
  return create(RequestContextSchema, { owner: { case: "orgId", value: orgId } });
}

/** A permission in the chosen organisation. */
export function useCan(): (permission: string) => boolean {
  const access = useAccess();
  const { orgId } = useOrg();
  return (permission) => access.inOrg(permission, orgId);
}
