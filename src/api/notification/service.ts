import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { OwnerSchema, OwnerType } from "../../../gen/svc/object/v3alpha/object_pb.js";
import {
  GetSMSProviderSchema,
  GetSMTPProviderSchema,
  type PatchSMSProvider,
  type PatchSMTPProvider,
  SMSProviderSchema,
  SMTPProviderSchema,
  SMTPTLSMode,
  type SMSProvider,
  type SMTPProvider,
} from "../../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import {
  CreateSMSProviderResponseSchema,
  CreateSMTPProviderResponseSchema,
  type NotificationProviderService,
  PatchSMSProviderResponseSchema,
  PatchSMTPProviderResponseSchema,
  type SearchSMSProvidersRequest,
  type SearchSMTPProvidersRequest,
  TestSMSProviderResponseSchema,
  TestSMTPProviderResponseSchema,
} from "../../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { DetailsSchema, State } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import {
  activateNotificationProvider,
  createNotificationProvider,
  deactivateNotificationProvider,
  deleteNotificationProvider,
  patchNotificationProvider,
} from "../../command/notification-providers.js";
import type { SecretBox } from "../../crypto/secrets.js";
import { inheritanceChain } from "../../domain/contexts.js";
import type { HttpSmsConfig, ProviderKind, SmtpConfig, SmtpTlsMode, TwilioSmsConfig } from "../../domain/notification-providers.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { OutboundHttp } from "../../net/outbound-http.js";
import { SendFailure, sendMailVia, sendSmsVia } from "../../notification/senders.js";
import type { NotificationProviderQueries, ProviderView } from "../../query/notification-providers.js";
import type { SettingsQueries } from "../../query/settings.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import { listDetails, listWindow } from "../list.js";
import { providerSearchOf } from "./search.js";

export interface NotificationProviderDeps {
  es: EventStore;
  box: SecretBox;
  providers: NotificationProviderQueries;
  settings: SettingsQueries;
  tenancy: TenancyQueries;
  /** SMS providers are reached through it (SVC_TARGET_DENY). */
  outbound: OutboundHttp;
}

/** Providers belong to an instance: the one of the request's context. */
function instanceOf(ctx: HandlerContext) {
  const info = callInfo(ctx);
  if (info.target.type === "org") {
    throw errors.invalidArgument("NOTIF-0rg1", "invalid ctx: notification providers belong to an instance; use ctx.instance_id or ctx.instance_domain");
  }
  return { instanceId: info.target.instance.id, creator: info.caller.userId };
}

const toDetails = (d: { id: string; sequence: number; changeDate: Date; instanceId: string }) =>
  create(DetailsSchema, {
    id: d.id,
    sequence: BigInt(d.sequence),
    changeDate: timestampFromDate(d.changeDate),
    resourceOwner: create(OwnerSchema, { type: OwnerType.INSTANCE, id: d.instanceId }),
  });

const tlsModes: Record<SMTPTLSMode, SmtpTlsMode> = {
  // Unset: STARTTLS required, the safe choice for a mail server on the internet.
  [SMTPTLSMode.SMTP_TLS_MODE_UNSPECIFIED]: "starttls",
  [SMTPTLSMode.SMTP_TLS_MODE_NONE]: "none",
  [SMTPTLSMode.SMTP_TLS_MODE_STARTTLS]: "starttls",
  [SMTPTLSMode.SMTP_TLS_MODE_TLS]: "tls",
};
const tlsProto: Record<SmtpTlsMode, SMTPTLSMode> = {
  none: SMTPTLSMode.SMTP_TLS_MODE_NONE,
  starttls: SMTPTLSMode.SMTP_TLS_MODE_STARTTLS,
  tls: SMTPTLSMode.SMTP_TLS_MODE_TLS,
};

function smtpConfigOf(p: SMTPProvider): SmtpConfig {
  return {
    host: p.host,
    port: p.port,
    tls: tlsModes[p.tls],
    user: p.user,
    senderAddress: p.senderAddress,
    senderName: p.senderName,
    replyToAddress: p.replyToAddress,
  };
}

function smtpChangesOf(p: PatchSMTPProvider): Partial<SmtpConfig> {
  return {
    host: p.host,
    port: p.port,
    tls: p.tls === undefined ? undefined : tlsModes[p.tls],
    user: p.user,
    senderAddress: p.senderAddress,
    senderName: p.senderName,
    replyToAddress: p.replyToAddress,
  };
}

function smsConfigOf(p: SMSProvider | PatchSMSProvider) {
  switch (p.providerType.case) {
    case "http":
      return { providerType: "http" as const, config: { url: p.providerType.value.url } satisfies HttpSmsConfig, secret: undefined };
    case "twilio": {
      const t = p.providerType.value;
      const config: TwilioSmsConfig = { sid: t.sid, senderNumber: t.senderNumber, baseUrl: t.baseUrl };
      // An empty token on a patch keeps the stored one.
      return { providerType: "twilio" as const, config, secret: t.token || undefined };
    }
    default:
      return undefined;
  }
}

const stateOf = (active: boolean) => (active ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE);

function toGetSmtp(v: ProviderView) {
  const c = v.config as unknown as SmtpConfig;
  return create(GetSMTPProviderSchema, {
    details: toDetails(v),
    state: stateOf(v.active),
    provider: create(SMTPProviderSchema, {
      description: v.description,
      host: c.host,
      port: c.port,
      tls: tlsProto[c.tls],
      user: c.user,
      senderAddress: c.senderAddress,
      senderName: c.senderName,
      replyToAddress: c.replyToAddress,
    }),
  });
}

function toGetSms(v: ProviderView) {
  const provider = create(SMSProviderSchema, { description: v.description });
  if (v.providerType === "http") {
    provider.providerType = {
      case: "http",
      value: { $typeName: "svc.resources.notification.v3alpha.HTTPSMSProvider", url: (v.config as unknown as HttpSmsConfig).url },
    };
  } else {
    const c = v.config as unknown as TwilioSmsConfig;
    provider.providerType = {
      case: "twilio",
      value: { $typeName: "svc.resources.notification.v3alpha.TwilioSMSProvider", sid: c.sid, senderNumber: c.senderNumber, baseUrl: c.baseUrl, token: "" },
    };
  }
  return create(GetSMSProviderSchema, { details: toDetails(v), state: stateOf(v.active), provider });
}

export function notificationProviderService(deps: NotificationProviderDeps): ServiceImpl<typeof NotificationProviderService> {
  const { es, box, providers } = deps;
  const base = (ctx: HandlerContext, kind: ProviderKind, id: string) => ({ ...instanceOf(ctx), kind, id });
  const found = async <T>(kind: ProviderKind, id: string, v: Promise<T | null>): Promise<T> => {
    const row = await v;
    if (!row) throw errors.notFound("NOTIF-n0t3", `${kind} provider "${id}" not found`);
    return row;
  };
  const details = (d: ChangeDetails) => ({ details: toDetails(d) });
  /** The methods both kinds have alike, but for the kind and its view's message: delete, get, search, (de)activate. */
  const kindMethods = <V>(kind: ProviderKind, toGet: (v: ProviderView) => V) => ({
    delete: async (req: { id: string }, ctx: HandlerContext) => details(await deleteNotificationProvider(es, base(ctx, kind, req.id))),
    get: async (req: { id: string }, ctx: HandlerContext) => ({
      provider: toGet(await found(kind, req.id, providers.provider(instanceOf(ctx).instanceId, kind, req.id))),
    }),
    search: async (req: SearchSMTPProvidersRequest | SearchSMSProvidersRequest, ctx: HandlerContext) => {
      const page = await providers.search(instanceOf(ctx).instanceId, kind, providerSearchOf(req), listWindow(req.query));
      return { details: listDetails(page), sortingColumn: req.sortingColumn, result: page.rows.map(toGet) };
    },
    activate: async (req: { id: string }, ctx: HandlerContext) => details(await activateNotificationProvider(es, base(ctx, kind, req.id))),
    deactivate: async (req: { id: string }, ctx: HandlerContext) => details(await deactivateNotificationProvider(es, base(ctx, kind, req.id))),
    /** The provider with its secret opened, for a test message. */
    usable: (id: string, ctx: HandlerContext) => found(kind, id, providers.usable(instanceOf(ctx).instanceId, kind, id)),
  });
  const smtp = kindMethods("smtp", toGetSmtp);
  const sms = kindMethods("sms", toGetSms);
  /** Sends the test message; a failure is FAILED_PRECONDITION with the reason (the provider's answer). */
  const test = async (send: () => Promise<void>) => {
    try {
      await send();
    } catch (e) {
      if (e instanceof SendFailure) throw errors.failedPrecondition("NOTIF-t3st", `the test message was not sent: ${e.message}`);
      throw e;
    }
  };

  /** With smtp_sender_address_matches_instance_domain, the sender is an address at one of the instance's domains. */
  const checkSender = async (instanceId: string, address: string | undefined) => {
    if (address === undefined) return;
    const policy = await deps.settings.values("domain", inheritanceChain({ type: "instance", instanceId }));
    if (!policy.smtp_sender_address_matches_instance_domain) return;
    const domains = await deps.tenancy.domainsOf(instanceId);
    const domain = address.slice(address.lastIndexOf("@") + 1).toLowerCase();
    if (!domains.includes(domain))
      throw errors.invalidArgument(
        "NOTIF-s3nd",
        `invalid provider.sender_address: the domain settings ask for an address at one of the instance's domains (${domains.join(", ")})`,
      );
  };

  /** An SMTP server written as an address must not be one SVC_TARGET_DENY denies (a name is checked at each send, after DNS). */
  const checkSmtpHost = (host: string | undefined) => {
    const problem = host === undefined ? undefined : deps.outbound.policy.hostProblem(host);
    if (problem) throw errors.invalidArgument("NOTIF-h0st", `invalid provider.host: ${problem}`);
  };

  /** An SMS provider's URL must not lead where SVC_TARGET_DENY forbids (checked again at each send, after DNS). */
  const checkSmsUrl = (c: ReturnType<typeof smsConfigOf>) => {
    const [url, field] =
      c?.providerType === "http" ? [c.config.url, "provider.http.url"] : c?.providerType === "twilio" ? [c.config.baseUrl, "provider.twilio.base_url"] : [];
    const problem = url ? deps.outbound.policy.urlProblem(url) : undefined;
    if (problem) throw errors.invalidArgument("NOTIF-ur1d", `invalid ${field}: ${problem}`);
    return c;
  };

  return {
    async createSMTPProvider(req, ctx) {
      const p = req.provider!;
      checkSmtpHost(p.host);
      await checkSender(instanceOf(ctx).instanceId, p.senderAddress);
      const { details: d } = await createNotificationProvider(es, box, {
        ...instanceOf(ctx),
        kind: "smtp",
        providerType: "smtp",
        description: p.description,
        config: smtpConfigOf(p),
        secret: p.password,
      });
      return create(CreateSMTPProviderResponseSchema, details(d));
    },
    async patchSMTPProvider(req, ctx) {
      const p = req.provider!;
      checkSmtpHost(p.host);
      await checkSender(instanceOf(ctx).instanceId, p.senderAddress);
      const { details: d } = await patchNotificationProvider(es, box, {
        ...base(ctx, "smtp", req.id),
        description: p.description,
        config: smtpChangesOf(p),
        secret: p.password,
      });
      return create(PatchSMTPProviderResponseSchema, details(d));
    },
    deleteSMTPProvider: smtp.delete,
    getSMTPProvider: smtp.get,
    searchSMTPProviders: smtp.search,
    activateSMTPProvider: smtp.activate,
    deactivateSMTPProvider: smtp.deactivate,
    async testSMTPProvider(req, ctx) {
      const p = await smtp.usable(req.id, ctx);
      await test(() =>
        sendMailVia(
          p,
          {
            to: req.receiverAddress,
            subject: "Test message",
            text: "This is a test message: the SMTP provider works.",
          },
          deps.outbound,
        ),
      );
      return create(TestSMTPProviderResponseSchema, {});
    },

    async createSMSProvider(req, ctx) {
      const p = req.provider!;
      const c = checkSmsUrl(smsConfigOf(p))!;
      const { details: d, signingKey } = await createNotificationProvider(es, box, {
        ...instanceOf(ctx),
        kind: "sms",
        providerType: c.providerType,
        description: p.description,
        config: c.config,
        secret: c.secret ?? "",
      });
      return create(CreateSMSProviderResponseSchema, { ...details(d), signingKey });
    },
    async patchSMSProvider(req, ctx) {
      const p = req.provider!;
      const c = checkSmsUrl(smsConfigOf(p));
      const { details: d, signingKey } = await patchNotificationProvider(es, box, {
        ...base(ctx, "sms", req.id),
        description: p.description,
        providerType: c?.providerType,
        config: c?.config,
        secret: c?.secret,
      });
      return create(PatchSMSProviderResponseSchema, { ...details(d), signingKey });
    },
    deleteSMSProvider: sms.delete,
    getSMSProvider: sms.get,
    searchSMSProviders: sms.search,
    activateSMSProvider: sms.activate,
    deactivateSMSProvider: sms.deactivate,
    async testSMSProvider(req, ctx) {
      const p = await sms.usable(req.id, ctx);
      await test(() => sendSmsVia(p, { to: req.receiverPhone, text: "This is a test message: the SMS provider works.", language: "en" }, deps.outbound));
      return create(TestSMSProviderResponseSchema, {});
    },
  };
}
