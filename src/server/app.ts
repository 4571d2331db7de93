import type http from "node:http";
import type { DescFile } from "@bufbuild/protobuf";
import { Code, createContextValues, cors as connectCors, type Interceptor } from "@connectrpc/connect";
import { fastifyConnectPlugin } from "@connectrpc/connect-fastify";
import fastifyCors from "@fastify/cors";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from "fastify";
import { actionService } from "../api/action/service.js";
import { notificationProviderService } from "../api/notification/service.js";
import { featureService } from "../api/feature/service.js";
import { idpIntentService } from "../api/idp/intents.js";
import { serviceProviderKeys } from "../command/idps.js";
import { idpService } from "../api/idp/service.js";
import type { Client } from "../domain/forwarded.js";
import { UserQueries } from "../query/users.js";
import { healthService } from "../api/health/service.js";
import { languageService } from "../api/language/service.js";
import { loginSettingsService } from "../api/login-settings/service.js";
import { securitySettingsService } from "../api/security-settings/service.js";
import { domainSettingsService } from "../api/domain-settings/service.js";
import { orgDomainService } from "../api/org/domains.js";
import { DomainValidator } from "../net/domain-validation.js";
import { textSettingsService } from "../api/text-settings/service.js";
import { brandingSettingsService } from "../api/branding-settings/service.js";
import { orgService } from "../api/org/service.js";
import { userService } from "../api/user/service.js";
import { sessionService } from "../api/session/service.js";
import { eventService } from "../api/event/service.js";
import { instanceService } from "../api/instance/service.js";
import { userSchemaService } from "../api/user-schema/service.js";
import { AuditLog } from "../query/audit-log.js";
import { applicationService } from "../api/application/service.js";
import { membershipService } from "../api/membership/service.js";
import { projectService } from "../api/project/service.js";
import { userGrantService } from "../api/usergrant/service.js";
import { webKeyService } from "../api/webkey/service.js";
import { indexOf, reflectionServices } from "../api/reflection/service.js";
import { TargetCaller } from "../actions/caller.js";
import { OutboundHttp, outboundFetch, type ResolveHost } from "../net/outbound-http.js";
import { LdapFederation } from "../federation/ldap.js";
import { RedirectProtocols } from "../federation/redirect.js";
import { TargetAddressPolicy } from "../domain/target-addresses.js";
import { RateLimiter } from "../command/rate-limits.js";
import { executionFunctions, type ExecutionCatalogue } from "../domain/conditions.js";
import { startEventExecutions } from "../actions/event-worker.js";
import { FunctionExecutions } from "../actions/functions.js";
import { createExecutionInterceptor } from "../actions/interceptor.js";
import { createAuthenticationInterceptor, createAuthorizationInterceptor } from "../authz/interceptor.js";
import { type Clock, systemClock } from "../domain/clock.js";
import { referenceOf, unexpectedFault } from "../errors/errors.js";
import { createErrorLogInterceptor } from "../errors/log-unexpected.js";
import { defaultRolePermissions } from "../domain/roles.js";
import { PersonalAccessTokenVerifier, TokenVerifiers } from "../authz/verifier.js";
import { registerProjections } from "../projections/index.js";
import { outdatedProjections, rebuildProjections } from "../projections/rebuild.js";
import { allEventTypes } from "../events/index.js";
import { registerLoginUi } from "../login/routes.js";
import { portabilityService } from "../api/portability/jobs.js";
import { registerPortability } from "../api/portability/routes.js";
import { clientKey } from "../authz/context.js";
import { FailureLimiter } from "../command/failure-limits.js";
import { TrustedProxies } from "../domain/forwarded.js";
import { decorateTraceId } from "../http/trace-id.js";
import { decorateClient } from "../web/client.js";
import { ReplayGuard } from "../command/replay.js";
import type { SigningKeyPolicy } from "../command/signing-keys.js";
import { Clients } from "../oidc/clients.js";
import { oidcQueries, scopeOf } from "../oidc/context.js";
import { OpaqueTokens } from "../oidc/opaque.js";
import { registerOidc } from "../oidc/routes.js";
import { Tokens } from "../oidc/tokens.js";
import { OidcAccessTokenVerifier } from "../oidc/verifier.js";
import { Signer } from "../login/signing.js";
import { ensureFirstInstance, type FirstInstance } from "../command/setup.js";
import { type Config, usableCores } from "../config/config.js";
import { StartupError } from "../config/startup-error.js";
import { loadMasterKey, masterKeyOpens } from "../storage/masterkey.js";
import { closeHashWorkers, sizeHashWorkers } from "../crypto/hash-worker-pool.js";
import { SecretBox } from "../crypto/secrets.js";
import { changeNotice, EVENTS_CHANNEL, EventStore, parseChangeNotice } from "../eventstore/eventstore.js";
import { ActionQueries } from "../query/actions.js";
import { NotificationProviderQueries } from "../query/notification-providers.js";
import { Channels } from "../notification/channels.js";
import { type NotificationWorker, startNotificationWorker } from "../notification/worker.js";
import { ProjectionCache } from "../query/cache.js";
import { FeatureQueries } from "../query/features.js";
import { IdpQueries } from "../query/idps.js";
import { SettingsQueries } from "../query/settings.js";
import { TenancyQueries } from "../query/tenancy.js";
import { openDatabase, type Database } from "../storage/database.js";
import { applyMigrations, withSetupLock } from "../storage/migrate.js";
import { validationInterceptor } from "../validation/validate.js";
import { shareDefaultAbortReason } from "./abort-reason.js";
import { DualProtocolServer } from "./listener.js";
import { startObserving } from "./observe.js";
import type { WorkerPeers } from "./worker-peers.js";
import { registerApiReference } from "./api-reference.js";
import { registerConsole } from "./console.js";
import { READ_AFTER_HEADER, registerReadAfter } from "./read-after.js";
import { buildOpenApi, openApiFor } from "./openapi.js";
import { registerRestGateway } from "./rest-gateway.js";
import { SERVER_JSON_WRITE } from "../schema/json-writer.js";
import { methodPaths, mount, routesOf, serviceDescriptors as S, type Mounted } from "./services.js";
import { BODY_LIMIT } from "./decoding.js";
import type { Logger } from "pino";
import { hostnameOf } from "../authz/interceptor.js";
import { createLogger, isFirstEmbeddedStart, RequestLogController, registerRequestLog, startupLogger } from "./logging.js";
import { DEFAULT_PASSWORD_HASH_COST, setPasswordHashCost } from "../crypto/password.js";

/** Paths without CORS: exact, or every path under one that ends in "/". */
const NO_CORS_PATHS = ["/oauth/v2/authorize", "/oidc/v1/end_session", "/ui/", "/metrics"];

export interface RunningServer {
  /** http://<host>:<port> the server listens on (https:// with SVC_TLS_CERT). */
  url: string;
  port: number;
  app: FastifyInstance;
  db: Database;
  es: EventStore;
  /** The projection cache (tests and metrics read its counters). */
  cache: ProjectionCache;
  firstInstance: FirstInstance;
  mounted: Mounted[];
  /** Function executions, for the OIDC provider. */
  functions: FunctionExecutions;
  /** The instances' SMTP and SMS providers (the notification worker's and the tests' reads). */
  notificationProviders: NotificationProviderQueries;
  /** Sends an instance's mail and SMS through its active providers (mail: else the system default). */
  channels: Channels;
  /** Sends the messages events ask for (codes, links). */
  notifications: NotificationWorker;
  /** Seals and opens the stored secrets with the master key (commands that store codes; tests). */
  box: SecretBox;
  close(): Promise<void>;
}

export interface StartOptions {
  /** false: no logs at all (tests). */
  logger?: boolean;
  /** Where the log lines go (tests read them); default standard output. */
  logStream?: { write(line: string): void };
  /** The process's logger (main: its start-up lines share it); default one made of SVC_LOG_LEVEL and SVC_LOG_FORMAT. */
  log?: Logger;
  /** How execution targets' host names are resolved (tests: names of their own); default the system's resolver. */
  resolveHost?: ResolveHost;
  /** The time of every time-based decision (src/domain/clock.ts); tests move it. Default the system's. */
  clock?: Clock;
  /** The built admin console (tests build their own); default dist/console. */
  consoleDir?: string;
  /** A worker's link to the other workers of its machine (SVC_WORKERS >= 2, `worker-peers.ts`). */
  peers?: WorkerPeers;
}

function allFiles(mounted: Mounted[]): DescFile[] {
  const out = new Map<string, DescFile>();
  const visit = (f: DescFile) => {
    if (out.has(f.name)) return;
    out.set(f.name, f);
    f.dependencies.forEach(visit);
  };
  for (const m of mounted) visit(m.service.file);
  return [...out.values()];
}

/** Opens the database, migrates it, makes sure the first instance exists, and serves every protocol on one port. */
export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  shareDefaultAbortReason();
  const log =
    opts.log ??
    createLogger({
      level: opts.logger === false ? "silent" : config.logLevel,
      format: config.logFormat,
      ...(opts.logStream ? { stream: opts.logStream } : {}),
    });
  // The process's cost of new password hashes (servers embedded in one process share it: the tests' do).
  setPasswordHashCost(config.passwordHashCost);
  // The bcrypt/argon2 threads: this process's share of the cores, which its sibling workers share.
  sizeHashWorkers(usableCores(), opts.peers ? config.workers : 1);
  if (config.passwordHashCost < DEFAULT_PASSWORD_HASH_COST)
    log.warn({ cost: config.passwordHashCost }, `SVC_PASSWORD_HASH_COST=${config.passwordHashCost}: new password hashes are cheap to guess (for tests only)`);
  // A first start creates the embedded cluster (initdb) and migrates it: seconds without a word otherwise. Said only
  // then (a refused start stays one line); how long the database took is said at every start.
  const preparing = performance.now();
  const role = opts.peers?.role;
  if (!role && isFirstEmbeddedStart(config)) startupLogger(log).info({ dataDir: config.dataDir }, "preparing the database ...");
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    directUrl: config.databaseDirectUrl,
    timeouts: config.databaseTimeouts,
    dataDir: config.dataDir,
    poolSize: role?.poolSize ?? config.databasePoolSize,
    embeddedUrl: role?.embeddedUrl,
    startTag: role?.startTag,
    replicas: config.databaseReplicas.urls.length ? { ...config.databaseReplicas, poolSize: role?.poolSize ?? config.databasePoolSize } : undefined,
  });
  try {
    return await serve(config, db, { ...opts, log }, preparing);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

async function serve(config: Config, db: Database, opts: StartOptions & { log: Logger }, preparing: number): Promise<RunningServer> {
  // The time of every time-based decision (src/domain/clock.ts); tests move it.
  const clock = opts.clock ?? systemClock;
  const es = new EventStore(db, clock);
  registerProjections(es);
  // Behind a pooler in transaction mode LISTEN hears nothing and a session lock is left on a pooled session:
  // refused before the set-up lock is taken.
  if (db.kind === "postgres" && !(await db.notificationsArrive())) {
    throw new StartupError(
      "notifications sent through DATABASE_URL do not reach this server's LISTEN connection: when DATABASE_URL goes through a pooler in transaction mode (PgBouncer), set SVC_DATABASE_DIRECT_URL to the PostgreSQL server itself",
    );
  }
  // Processes starting together on one database migrate, check the key and create the first instance one
  // after the other: the second finds everything done.
  const { masterKey, firstInstance, rebuilt } = await withSetupLock(db, async (session) => {
    await applyMigrations(session);
    // A projection whose handlers changed (a newer version) is rebuilt from the log before anything reads it.
    const outdated = await outdatedProjections(db);
    const rebuilt = outdated.length ? (await rebuildProjections(db, outdated)).tables : [];
    const key = await loadMasterKey(db, config.masterKey, config.dataDir);
    return { masterKey: key, firstInstance: await ensureFirstInstance(es, config), rebuilt };
  });
  const ms = Math.round(performance.now() - preparing);
  startupLogger(opts.log).info({ ms }, `database ready in ${ms} ms`);
  const box = new SecretBox(masterKey);
  const cache = new ProjectionCache();
  // Entries read from what changed are dropped: here right after commit, in every process on the NOTIFY.
  es.onCommitted((events) => cache.invalidate(events));
  const applyNotice = (notice: string) => {
    // First: a cache entry loaded after the drop below must come from a node that has the change.
    db.changedElsewhere();
    const changed = parseChangeNotice(notice);
    if (changed) cache.invalidate(changed);
    else cache.clear();
  };
  const stopListening = await db.listen(EVENTS_CHANNEL, applyNotice);

  // Workers of one machine also hear it from the writer before its caller does (a NOTIFY arrives a moment later),
  // so that the caller's next call, served by another worker, reads what it wrote.
  const peers = opts.peers;
  if (peers) {
    peers.onChanged(applyNotice);
    es.onCommitted((events) => peers.changed(changeNotice(events)));
  }

  const tenancy = new TenancyQueries(db, cache);
  const settings = new SettingsQueries(db, cache);
  const features = new FeatureQueries(settings);
  const actions = new ActionQueries(db, cache, box);
  const notificationProviders = new NotificationProviderQueries(db, cache, box);
  // SVC_TARGET_DENY: where the server may connect for its users (targets, SMS providers, domain validation, S3),
  // checked when a URL is set and at each call after DNS.
  const targetPolicy = new TargetAddressPolicy(config.targetDeny);
  // SMS providers' URLs are an instance administrator's choice: they go out as targets do.
  const outbound = new OutboundHttp(targetPolicy, opts.resolveHost);
  /** This server's issuer as a client reached it (scheme and host, as a trusted proxy forwarded them). */
  const issuerOfClient = (client: Client) => `${config.externalSecure || client.secure ? "https" : "http"}://${client.host.toLowerCase()}`;
  // The protocols of external identity providers, for the login UI and the intents API: every request under the outbound policy.
  const federation = {
    protocols: new RedirectProtocols(outboundFetch(outbound, { timeoutMs: 10_000, maxBytes: 1024 * 1024 }), {
      insecureHttp: config.idpInsecureHttp,
      samlKeys: (p) => serviceProviderKeys(es, box, new IdpQueries(db), p),
      endpointOverrides: config.idpEndpointOverrides,
    }),
    directories: new LdapFederation((host) => outbound.address(host)),
  };
  const channels = new Channels(notificationProviders, config.smtp, outbound);
  const verifiers = new TokenVerifiers(tenancy);
  verifiers.add(new PersonalAccessTokenVerifier(tenancy, clock));
  const o = config.oidc;
  const keyPolicy: SigningKeyPolicy = { box, signMs: o.signingKeyS * 1000, maxTokenMs: Math.max(o.accessTokenS, o.idTokenS) * 1000 };
  const sessionLifetimes = { idleMs: config.sessions.idleS * 1000, maxMs: config.sessions.maxS * 1000 };
  const oidcReads = oidcQueries(db, cache, box, sessionLifetimes, clock);
  const tokens = new Tokens(
    es,
    { ...oidcReads, tenancy },
    keyPolicy,
    new OpaqueTokens(masterKey),
    {
      accessTokenMs: o.accessTokenS * 1000,
      idTokenMs: o.idTokenS * 1000,
      refreshIdleMs: o.refreshIdleS * 1000,
      refreshAbsoluteMs: o.refreshAbsoluteS * 1000,
      refreshGraceMs: o.refreshGraceS * 1000,
      authRequestMs: 30 * 60_000,
    },
    clock,
  );
  const replay = new ReplayGuard(db, clock);
  // SVC_RATE_LIMIT_*_FAILURES_*: failed attempts at guessable secrets, in the database for every process on it.
  const failureLimiter = new FailureLimiter(db, clock);
  const failures = { limiter: failureLimiter, rules: config.failureLimits };
  // The API's checks of a user's secrets (the sessions API, ChangePassword) count per account: their caller is a
  // service that speaks for many addresses.
  const accountLimits = config.failureLimits.signInAccount && { limiter: failureLimiter, account: config.failureLimits.signInAccount };
  const clients = new Clients(oidcReads.oauthClients, replay, tenancy, clock);
  verifiers.add(new OidcAccessTokenVerifier(tokens, tenancy));

  const mounted: Mounted[] = [];
  const serviceNames = () => mounted.map((m) => m.service.typeName).sort();
  // Ready when the database answers and the master key opens its secrets (signing keys among them).
  const ready = () => masterKeyOpens(db, box).catch(() => false);
  // Organisation domain validation reaches out as targets do, under the same address policy.
  const domainValidator = new DomainValidator(config.domainValidation, targetPolicy);
  const catalogue: ExecutionCatalogue = {
    methods: () => methodPaths(mounted),
    services: serviceNames,
    functions: executionFunctions,
    eventTypes: allEventTypes,
  };
  mounted.push(
    mount(S.language, languageService({ es, settings })),
    mount(S.loginSettings, loginSettingsService({ es, settings })),
    mount(S.securitySettings, securitySettingsService({ es, settings })),
    mount(S.domainSettings, domainSettingsService({ es, settings })),
    mount(S.textSettings, textSettingsService({ es, settings })),
    mount(S.brandingSettings, brandingSettingsService({ es, db, settings })),
    mount(S.action, actionService({ es, db, cache, box, actions, catalogue, targetPolicy })),
    mount(S.notificationProvider, notificationProviderService({ es, box, providers: notificationProviders, settings, tenancy, outbound })),
    mount(S.idp, idpService({ es, db, cache, box, idps: new IdpQueries(db), tenancy, secure: config.externalSecure })),
    mount(
      S.idpIntent,
      idpIntentService({
        es,
        db,
        settings,
        box,
        limits: accountLimits,
        idps: new IdpQueries(db),
        users: new UserQueries(db, cache),
        ...federation,
        issuerOf: issuerOfClient,
        clock,
      }),
    ),
    mount(S.org, orgService({ es, db, cache, tenancy, externalDomain: config.externalDomain })),
    mount(S.orgDomain, orgDomainService({ es, db, cache, tenancy, settings, validator: domainValidator })),
    mount(S.user, userService({ es, db, cache, settings, tenancy, box, limits: accountLimits, clock })),
    mount(S.event, eventService({ auditLog: new AuditLog(db, cache, clock) })),
    mount(S.instance, instanceService({ es, db, cache, settings })),
    mount(S.userSchema, userSchemaService({ es, db, cache })),
    mount(
      S.session,
      sessionService({
        es,
        db,
        box,
        settings,
        replay,
        limits: accountLimits,
        cache,
        tenancy,
        authRequests: oidcReads.authRequests,
        clients: oidcReads.oauthClients,
        projects: oidcReads.projects,
        userGrants: oidcReads.userGrants,
        clock,
        issuerOf: issuerOfClient,
      }),
    ),
    mount(S.project, projectService({ es, db, cache, tenancy })),
    mount(S.application, applicationService({ es, db, cache, tenancy, clock })),
    mount(S.membership, membershipService({ es, db, cache, tenancy })),
    // a job's fault is logged as a request's would be (the logger below is made once the services are mounted)
    mount(S.portability, portabilityService({ es, db, box, settings, tenancy, clock, log: { error: (obj, msg) => log.error(obj, msg) } })),
    mount(S.userGrant, userGrantService({ es, db, cache, tenancy })),
    mount(S.webKey, webKeyService({ es, keys: oidcReads.keys, keyPolicy, clock })),
    mount(S.feature, featureService({ es, settings })),
    mount(S.health, healthService({ serviceNames, ready })),
  );
  // Reflection describes everything mounted, itself included: indexed on first use, once all are mounted.
  let index: ReturnType<typeof indexOf> | undefined;
  const reflection = reflectionServices(() => (index ??= indexOf(allFiles(mounted))), serviceNames);
  mounted.push(mount(S.reflectionV1, reflection.v1), mount(S.reflectionV1alpha, reflection.v1alpha));

  const authDeps = {
    tenancy,
    verifiers,
    features,
    rolePermissions: defaultRolePermissions,
    failures: config.failureLimits.tokenAddress && { limiter: failureLimiter, address: config.failureLimits.tokenAddress },
  };
  // Order matters: who and where first, then the shape of the request, then what the caller may do.
  // Executions run last: they need the context, and see the request as the handler will.
  let logger: FastifyInstance["log"] | undefined;
  const log = { warn: (obj: object, msg: string) => logger?.warn(obj, msg), error: (obj: object, msg: string) => logger?.error(obj, msg) };
  const caller = new TargetCaller(log, targetPolicy, opts.resolveHost);
  const functions = new FunctionExecutions(actions, caller);
  // Metrics (SVC_METRICS) and traces (OTEL_*): the first interceptor notes each RPC's code for them.
  const observe = await startObserving(config, {
    pool: db.pool,
    cache: cache.stats,
    reads: () => db.readStatus(),
    failovers: () => db.failovers(),
    log,
    peers,
  });
  observe.watch(es);
  const interceptors: Interceptor[] = [
    ...observe.interceptors,
    createErrorLogInterceptor(log),
    createAuthenticationInterceptor(authDeps),
    validationInterceptor,
    createAuthorizationInterceptor(authDeps),
    createExecutionInterceptor({ actions, caller }),
  ];
  // connect-es ignores unknown JSON fields (and so unknown enum names) by default; the API refuses them,
  // as protobuf JSON and the REST gateway do. Request bodies are checked first anyway (decoding.ts).
  // The same 4 MiB as REST bodies: connect-es would otherwise read up to 4 GiB.
  const connectOptions = { interceptors, jsonOptions: { ...SERVER_JSON_WRITE, ignoreUnknownFields: false }, readMaxBytes: BODY_LIMIT };
  const routes = routesOf(mounted, BODY_LIMIT, log);

  const app = Fastify({
    // One logger for the process (src/server/logging.ts), and one line per request (registerRequestLog) instead of Fastify's two.
    loggerInstance: opts.log as FastifyBaseLogger,
    logController: new RequestLogController(),
    // SVC_TLS_CERT / SVC_TLS_KEY: TLS on the same port, for every protocol; the files are watched for renewals.
    serverFactory: (handler) =>
      new DualProtocolServer(
        handler as never,
        config.shutdownGraceMs,
        config.tls && { files: config.tls, log: { warn: log.warn, info: (obj, msg) => logger?.info(obj, msg) } },
      ) as unknown as http.Server,
    bodyLimit: BODY_LIMIT,
    // Path parameters are validated by the protos (execution IDs run to 1000 characters, URL-encoded more).
    routerOptions: { maxParamLength: 4096 },
    return503OnClosing: false,
  });
  logger = app.log;
  registerRequestLog(app, async (host) => (await tenancy.instanceByDomain(hostnameOf(host)))?.id);
  if (rebuilt.length) app.log.info({ projections: rebuilt }, "rebuilt projections from the event log: their handlers' version changed");
  decorateClient(app, new TrustedProxies(config.trustedProxies.spec, config.trustedProxies.headers));
  decorateTraceId(app);
  // With replicas, every answer says what a caller carries to another machine to read its writes there.
  registerReadAfter(app, db, config.externalSecure);
  // Pages a browser navigates to (authorize, end session, the login UI) are never readable cross-origin
  // (RFC 9700 §2.6); APIs, the token, userinfo, introspection, revocation and keys endpoints are. Each route
  // is marked when it is added, so no request pays for the decision.
  app.addHook("onRoute", (route) => {
    if (NO_CORS_PATHS.some((p) => (p.endsWith("/") ? route.url.startsWith(p) : route.url === p))) route.config = { ...route.config, cors: false };
  });
  observe.register(app, mounted);
  // Routes without an error handler of their own (the OIDC endpoints, the login UI): a client error keeps
  // Fastify's answer, a server fault is logged under a reference and answered without its internal text.
  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    if (err.statusCode && err.statusCode < 500) return reply.send(err);
    // RFC 6749's JSON: the fault's reference (unexpectedFault, as every API answers it) in the description.
    const fault = unexpectedFault(req.log, err);
    if (fault.code === Code.Unavailable)
      return reply.status(503).header("retry-after", "1").send({ error: "temporarily_unavailable", error_description: fault.rawMessage });
    return reply.status(500).send({ error: "server_error", error_description: `${fault.rawMessage}, reference ${referenceOf(fault)}` });
  });
  // Header lists joined once: @fastify/cors joins arrays again for every answer.
  const corsOptions = {
    origin: config.corsOrigins.includes("*") ? true : config.corsOrigins,
    methods: [...new Set([...connectCors.allowedMethods, "GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])].join(", "),
    allowedHeaders: [...connectCors.allowedHeaders, "Authorization", "X-Svc-OrgId", READ_AFTER_HEADER].join(", "),
    exposedHeaders: [...connectCors.exposedHeaders, READ_AFTER_HEADER].join(", "),
    credentials: false,
    maxAge: 7200,
  };
  // The options are normalised once; a delegator would build them again for every request.
  await app.register(fastifyCors, corsOptions);
  // A preflight to a page is not found, as the OPTIONS route of @fastify/cors answers when CORS is off.
  for (const path of NO_CORS_PATHS) app.options(path.endsWith("/") ? `${path}*` : path, { config: { cors: false } }, (_req, reply) => reply.callNotFound());
  // Every call knows its client (the failure limits, the instance of a forwarded host); the observer's values
  // carry the request too.
  const contextValues = (req: FastifyRequest) => (observe.contextValues?.(req) ?? createContextValues()).set(clientKey, req.client);
  await app.register(fastifyConnectPlugin, { routes, ...connectOptions, contextValues });
  registerRestGateway(app, { mounted, interceptors, jsonOptions: connectOptions.jsonOptions }, BODY_LIMIT);
  // SVC_RATE_LIMIT_*: counts in the database, shared by every process on it.
  const limiter = new RateLimiter(db, clock);
  registerOidc(
    app,
    { ...oidcReads, es, tenancy, settings, tokens, clients, replay, functions, box, secure: config.externalSecure, clock },
    {
      limiter,
      client: config.rateLimits.oauthClient,
      address: config.rateLimits.oauthAddress,
      failures: config.failureLimits.tokenAddress && { limiter: failureLimiter, address: config.failureLimits.tokenAddress },
    },
  );
  registerLoginUi(app, {
    es,
    db,
    cache,
    tenancy,
    settings,
    box,
    signer: Signer.fromMasterKey(masterKey, clock),
    secureCookies: config.externalSecure,
    sessionLifetimes,
    rateLimit: { limiter, address: config.rateLimits.loginAddress },
    failures,
    replay,
    clock,
    protocols: federation.protocols,
    directories: federation.directories,
  });

  // Export, import and user import: JSON over HTTP only (contract); bodies up to 32 MiB, more from files.
  registerPortability(app, { ...authDeps, es, db, box, settings, exportDir: config.exportDir, targetPolicy, importBodyLimit: 32 * 2 ** 20 });

  const openApi = buildOpenApi(
    mounted.map((m) => m.service),
    { title: "svc IAM", version: "3.0-alpha" },
  );
  // The OAuth 2.0 flow's URLs are those of the instance the document is read from (each domain is its own issuer).
  app.get("/openapi.json", async (req) => openApiFor(openApi, (await scopeOf({ tenancy, secure: config.externalSecure }, req))?.issuer));
  registerApiReference(app, openApi);
  registerConsole(app, { db, tenancy, secure: config.externalSecure, ...(opts.consoleDir ? { dir: opts.consoleDir } : {}) });
  app.get("/healthz", async () => ({ status: "ok" }));
  // Neither decides readiness, both are named: replicas (the primary serves their reads) and a LISTEN connection
  // that reconnects (caches and subscriptions do without it meanwhile, `notification-listener.ts`).
  const databaseStates = () => {
    const replicas = db.readStatus()?.replicas;
    return {
      ...(db.listening() ? {} : { notifications: "reconnecting" }),
      ...(replicas ? { replicas: replicas.map(({ name, up, usable, lagSeconds }) => ({ name, up, usable, lagSeconds })) } : {}),
    };
  };
  app.get("/readyz", async (_req, reply) =>
    (await ready())
      ? { status: "ready", ...databaseStates() }
      : reply.status(503).send({ status: "unavailable", reason: "the database is unreachable or its secrets cannot be opened", ...databaseStates() }),
  );

  await app.listen({ port: config.port, host: config.host });
  const eventExecutions = startEventExecutions(db, es, actions, caller, log);
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const notifications = startNotificationWorker({
    db,
    es,
    box,
    channels,
    settings,
    log: { warn: log.warn, info: (obj, msg) => logger?.info(obj, msg) },
    link: { secure: config.externalSecure, port: config.externalPort || port },
  });
  observe.watchMessages(notifications.stats);
  const shownHost = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  let closing: Promise<void> | undefined;
  return {
    url: `${config.tls ? "https" : "http"}://${shownHost}:${port}`,
    port,
    app,
    db,
    es,
    cache,
    firstInstance,
    mounted,
    functions,
    notificationProviders,
    channels,
    notifications,
    box,
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await observe.close();
        await eventExecutions.stop();
        await notifications.stop();
        caller.close();
        domainValidator.close();
        outbound.close();
        await stopListening();
        // requests counted here and not yet in the database (large limits only)
        await limiter.close();
        await db.close();
        // bcrypt/argon2 verification threads (started at the first such login): none left running after close.
        await closeHashWorkers();
      })()),
  };
}
