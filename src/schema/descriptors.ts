import { getOption, hasOption, type DescMethod } from "@bufbuild/protobuf";
import { http as httpExt } from "../../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/google/api/http_pb.js";
import { method as methodExt, type MethodRules } from "../../gen/svc/options/v1/options_pb.js";
import type { ContextType } from "../domain/contexts.js";

/** What the proto says of a method, read once. */
export interface MethodInfo {
  permission: string;
  feature: string;
  httpSuccessCode: number;
  isPublic: boolean;
  /** The handler checks the permission in the context of the resource it loads. */
  resourceContext: boolean;
  /** `permission` is the organisation's name of it; see `permissionIn`. */
  permissionPerContext: boolean;
  http: HttpRule | undefined;
}

/** A handler may set this response header to override the proto's success code (PutExecution: 200 or 201). */
export const HTTP_STATUS_HEADER = "x-svc-http-code";

const cache = new Map<DescMethod, MethodInfo>();

// Standard protocols whose protos carry none of our options: callable without a token, like any gRPC server's.
const publicServices = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]);

export function methodInfo(m: DescMethod): MethodInfo {
  let info = cache.get(m);
  if (!info) {
    const rules: MethodRules | undefined = hasOption(m, methodExt) ? getOption(m, methodExt) : undefined;
    info = {
      permission: rules?.permission ?? "",
      feature: rules?.feature ?? "",
      httpSuccessCode: rules?.httpSuccessCode || 200,
      isPublic: (rules?.public ?? false) || publicServices.has(m.parent.typeName),
      resourceContext: rules?.resourceContext ?? false,
      permissionPerContext: rules?.permissionPerContext ?? false,
      http: hasOption(m, httpExt) ? getOption(m, httpExt) : undefined,
    };
    cache.set(m, info);
  }
  return info;
}

const contextPrefix: Record<ContextType, string> = { system: "system.", instance: "iam.", org: "" };

/**
 * The permission a method needs in a context. One declared per context (the settings' `policy.write`) is
 * named as the roles name it at each level: `system.policy.write`, `iam.policy.write`, `policy.write`.
 */
export function permissionIn(info: MethodInfo, context: ContextType): string {
  return info.permissionPerContext ? contextPrefix[context] + info.permission : info.permission;
}
