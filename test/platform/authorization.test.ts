import { create, type DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { callInfo, callerKey, hostInstanceKey, type Caller } from "../../src/authz/context.js";
import { createAuthorizationInterceptor, type AuthDeps } from "../../src/authz/interceptor.js";
import { defaultRolePermissions } from "../../src/domain/roles.js";
import { methodInfo, permissionIn } from "../../src/schema/descriptors.js";
import { serviceDescriptors } from "../../src/server/services.js";
import type { InstanceRow } from "../../src/query/tenancy.js";

const methods: DescMethod[] = Object.values(serviceDescriptors).flatMap((s) => s.methods);
const granted = new Set(Object.values(defaultRolePermissions).flat());

describe("every RPC of the registry is authorized", () => {
  it.each(methods.map((m) => [`${m.parent.typeName}/${m.name}`, m] as const))("%s declares a permission some role grants, or is public", (_name, m) => {
    const info = methodInfo(m);
    if (info.isPublic) return;
    expect(info.permission, "no permission declared").not.toBe("");
    // One declared per context (the settings' policy.write) names three: system.*, iam.*, and itself.
    const needed = info.permissionPerContext ? (["system", "instance", "org"] as const).map((c) => permissionIn(info, c)) : [info.permission];
    if (info.permission !== "authenticated") for (const p of needed) expect(granted.has(p), `no role grants ${p}`).toBe(true);
  });
});

describe("a resource_context handler that forgets its check fails closed", () => {
  const instance = { id: "i1", defaultOrgId: "o1" } as InstanceRow;
  const owner: Caller = {
    userId: "u1",
    instanceId: "i1",
    orgId: "o1",
    memberships: [{ contextType: "instance", contextId: "i1", instanceId: "i1", roles: ["IAM_OWNER"] }],
  };
  const deps = { features: { enabled: async () => true }, rolePermissions: defaultRolePermissions } as unknown as AuthDeps;
  const method = methods.find((m) => methodInfo(m).resourceContext)!;

  function call(handler: (req: UnaryRequest) => void, caller = owner) {
    const contextValues = createContextValues().set(hostInstanceKey, instance).set(callerKey, caller);
    const req = {
      method,
      service: method.parent,
      message: create(method.input),
      contextValues,
      stream: false,
      header: new Headers(),
    } as unknown as UnaryRequest;
    const next = async (r: UnaryRequest | StreamRequest) => {
      handler(r as UnaryRequest);
      return { stream: false, message: create(method.output) } as never;
    };
    return createAuthorizationInterceptor(deps)(next)(req);
  }
  const infoOf = (r: UnaryRequest | StreamRequest) => callInfo({ values: r.contextValues } as never);

  it("answers INTERNAL when the handler neither authorized nor scoped", async () => {
    const err = await call(() => {}).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.Internal);
    expect(err?.message).toContain(`${method.name} answered without checking a permission`);
  });

  it("passes when the handler authorized in the resource's context, or scoped a search", async () => {
    await expect(call((r) => infoOf(r).authorize(infoOf(r).target))).resolves.toBeDefined();
    await expect(call((r) => void infoOf(r).scopeOf(methodInfo(method).permission))).resolves.toBeDefined();
  });

  it("denies when the caller lacks the permission there", async () => {
    const stranger: Caller = { ...owner, memberships: [] };
    const denied = call((r) => infoOf(r).authorize(infoOf(r).target), stranger);
    await expect(denied).rejects.toMatchObject({ code: Code.PermissionDenied });
  });
});
