import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection as ReflectionV1 } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { FeatureService } from "../../gen/svc/feature/v2/feature_service_pb.js";
import { ActionService } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { NotificationProviderService } from "../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { IdentityProviderIntentService } from "../../gen/svc/resources/idp/v3alpha/idp_intent_service_pb.js";
import { IdentityProviderService } from "../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { ApplicationService } from "../../gen/svc/resources/application/v3alpha/application_service_pb.js";
import { MembershipService } from "../../gen/svc/resources/membership/v3alpha/membership_service_pb.js";
import { PortabilityService } from "../../gen/svc/resources/portability/v3alpha/portability_service_pb.js";
import { ProjectService } from "../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { UserGrantService } from "../../gen/svc/resources/usergrant/v3alpha/user_grant_service_pb.js";
import { WebKeyService } from "../../gen/svc/resources/webkey/v3alpha/webkey_service_pb.js";
import { OrganizationService } from "../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { UserService } from "../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { SessionService } from "../../gen/svc/resources/session/v3alpha/session_service_pb.js";
import { EventService } from "../../gen/svc/resources/event/v3alpha/event_service_pb.js";
import { InstanceService } from "../../gen/svc/resources/instance/v3alpha/instance_service_pb.js";
import { UserSchemaService } from "../../gen/svc/resources/userschema/v3alpha/user_schema_service_pb.js";
import { LoginSettingsService } from "../../gen/svc/settings/login/v3alpha/login_service_pb.js";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { SecuritySettingsService } from "../../gen/svc/settings/security/v3alpha/security_service_pb.js";
import { DomainSettingsService } from "../../gen/svc/settings/domain/v3alpha/domain_service_pb.js";
import { OrganizationDomainService } from "../../gen/svc/resources/org/v3alpha/org_domain_service_pb.js";
import { TextSettingsService } from "../../gen/svc/settings/text/v3alpha/text_service_pb.js";
import { BrandingSettingsService } from "../../gen/svc/settings/branding/v3alpha/branding_service_pb.js";
import { checkRequestsFirst } from "./decoding.js";
import type { ErrorLog } from "../errors/errors.js";
import { serveUnaryGrpcAsConnect } from "./grpc-unary.js";

/** A service and its implementation. The list of them is the registry everything else derives from. */
export interface Mounted {
  service: DescService;
  impl: unknown;
}

export function mount<S extends DescService>(service: S, impl: ServiceImpl<S>): Mounted {
  return { service, impl };
}

/** The services every server mounts, in one place; their implementations come from app.ts. */
export const serviceDescriptors = {
  language: LanguageSettingsService,
  loginSettings: LoginSettingsService,
  securitySettings: SecuritySettingsService,
  domainSettings: DomainSettingsService,
  textSettings: TextSettingsService,
  brandingSettings: BrandingSettingsService,
  action: ActionService,
  notificationProvider: NotificationProviderService,
  idp: IdentityProviderService,
  idpIntent: IdentityProviderIntentService,
  org: OrganizationService,
  orgDomain: OrganizationDomainService,
  user: UserService,
  session: SessionService,
  event: EventService,
  instance: InstanceService,
  userSchema: UserSchemaService,
  project: ProjectService,
  application: ApplicationService,
  membership: MembershipService,
  portability: PortabilityService,
  userGrant: UserGrantService,
  webKey: WebKeyService,
  feature: FeatureService,
  health: Health,
  reflectionV1: ReflectionV1,
  reflectionV1alpha: ReflectionV1alpha,
} as const;

/**
 * Routes of every mounted service; each handler checks its request before connect-es decodes it (decoding.ts),
 * and unary methods answer plain gRPC calls through the Connect unary path (grpc-unary.ts).
 */
export function routesOf(mounted: Mounted[], readMaxBytes: number, log: ErrorLog) {
  return (router: ConnectRouter) => {
    for (const m of mounted) router.service(m.service, m.impl as never);
    checkRequestsFirst(router);
    serveUnaryGrpcAsConnect(router, readMaxBytes, log);
  };
}

/** `/<package>.<Service>/<Method>` of every RPC, sorted: the execution catalogue and reflection use it. */
export function methodPaths(mounted: Mounted[]): string[] {
  return mounted.flatMap((m) => m.service.methods.map((x) => `/${m.service.typeName}/${x.name}`)).sort();
}
