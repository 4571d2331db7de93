import type { FastifyRequest } from "fastify";
import type { SecretBox } from "../../crypto/secrets.js";
import { camelKeys, type HumanUserShape } from "../../domain/data-org.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import { importableHuman, importCreator, importedPasswordHash, importHuman, needsInitialisation } from "../../command/import/human.js";
import { requestInitialPassword } from "../../command/user-codes.js";
import { passwordRules } from "../../query/password-rules.js";
import type { SettingsQueries } from "../../query/settings.js";
import { authenticate, authorize, type HttpAuthDeps } from "./http.js";

export interface UserImportDeps extends HttpAuthDeps {
  es: EventStore;
  box: SecretBox;
  settings: SettingsQueries;
}

/** ZITADEL's ObjectDetails of a change (uint64 sequence as a string, protobuf JSON). */
export const objectDetails = (d: { sequence: number; changeDate: Date; resourceOwner: string }) => ({
  sequence: String(d.sequence),
  changeDate: d.changeDate.toISOString(),
  resourceOwner: d.resourceOwner,
});

/**
 * POST /management/v1/users/human/_import: one human with a hashed (or plain) password, a TOTP secret and
 * the password-change flag, into the organisation of `x-svc-orgid` (default the caller's); `user.import`
 * there (organisation owner). An unverified e-mail or no password: the initialisation mail.
 */
export async function importHumanUser(deps: UserImportDeps, req: FastifyRequest) {
  const { instance, caller } = await authenticate(deps, req);
  const header = req.headers["x-svc-orgid"];
  const orgId = (Array.isArray(header) ? header[0] : header) || caller.orgId;
  const org = await deps.tenancy.orgById(instance.id, orgId);
  if (!org) throw errors.notFound("IMPORT-0rgh", `organization "${orgId}" not found`);
  authorize(deps, caller, { type: "org", instance, org }, "user.import");
  const body = camelKeys(req.body) as HumanUserShape;
  const human = importableHuman(body);
  const rules = await passwordRules(deps.settings, instance.id, org.id);
  const passwordHash = await importedPasswordHash(human, rules.problem);
  const creator = importCreator(caller.userId);
  const { details } = await importHuman(deps.es, deps.box, { instanceId: instance.id, orgId: org.id, creator, human, passwordHash });
  if (needsInitialisation(human, passwordHash)) await requestInitialPassword(deps.es, deps.box, { instanceId: instance.id, userId: details.id, creator });
  return { userId: details.id, details: objectDetails(details) };
}
