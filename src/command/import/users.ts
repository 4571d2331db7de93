import { fromWire } from "../../domain/data-org.js";
import { errors } from "../../errors/errors.js";
import { passwordRules } from "../../query/password-rules.js";
import { idpLinkEvents } from "../idp-links.js";
import { requestInitialPassword } from "../user-codes.js";
import { setUserMetadata } from "../user-metadata.js";
import { createMachine } from "../users.js";
import { alreadyThere, type OrgImport } from "./context.js";
import { importableHuman, importedPasswordHash, importHumans, needsInitialisation, type HumanToImport } from "./human.js";

/** Humans written per transaction. */
const HUMAN_BATCH = 200;

/**
 * Human users: checked one by one, the good ones of each batch written together (`importHumans`); a user
 * this import created that has no verified address or no password is sent the initialisation mail, once.
 */
export async function importHumanUsers(o: OrgImport): Promise<void> {
  const { es, box } = o.deps;
  const rules = await passwordRules(o.deps.settings, o.req.instanceId, o.orgId);
  const humans = o.data.humanUsers ?? [];
  for (let start = 0; start < humans.length; start += HUMAN_BATCH) {
    o.check();
    const batch: HumanToImport[] = [];
    for (const [n, entry] of humans.slice(start, start + HUMAN_BATCH).entries()) {
      const i = start + n;
      const userId = entry.userId ?? "";
      await o.each("human_user", userId, async () => {
        if (!userId) throw errors.invalidArgument("IMPORT-u1d0", `invalid human_users[${i}].user_id: is required`);
        const human = importableHuman(entry.user ?? {}, `human_users[${i}].user.`, { emailRequired: false });
        batch.push({ userId, human, passwordHash: await importedPasswordHash(human, rules.problem, `human_users[${i}].user.password`) });
      });
    }
    const outcomes = await importHumans(es, box, { ...o.base, orgId: o.orgId }, batch);
    for (const [n, item] of batch.entries()) {
      const outcome = outcomes[n]!;
      if (outcome.error) {
        o.fail("human_user", item.userId, outcome.error);
        continue;
      }
      // Once: only for the user this import created.
      if (outcome.created && needsInitialisation(item.human, item.passwordHash)) {
        await o.each("human_user_mail", item.userId, () =>
          requestInitialPassword(es, box, { instanceId: o.req.instanceId, userId: item.userId, creator: o.req.creator }).then(() => {}),
        );
      }
      o.ok.humanUserIds.push(item.userId);
    }
  }
}

/** Users' links to their accounts at identity providers (the providers come first: `importIdps`). */
export async function importUserLinks(o: OrgImport): Promise<void> {
  const { instanceId, creator } = o.req;
  for (const [i, l] of (o.data.userLinks ?? []).entries()) {
    await o.each("user_link", `${l.idpId ?? ""}:${l.providedUserId ?? ""}`, async () => {
      if (!l.userId || !l.idpId || !l.providedUserId) {
        throw errors.invalidArgument("IMPORT-l1nk", `invalid user_links[${i}]: user_id, idp_id and provided_user_id are required`);
      }
      const link = { idpId: l.idpId, externalUserId: l.providedUserId, displayName: l.providedUserName ?? "" };
      await o.deps.es.execute(async (w) => {
        await w.lock(instanceId, "user", l.userId!);
        const user = await w.tx.user.findFirst({ where: { id: l.userId, orgId: o.orgId }, select: { id: true } });
        if (!user) throw errors.notFound("IMPORT-l1nu", `user_links[${i}].user_id: user "${l.userId}" not found in organization "${o.orgId}"`);
        const events = await idpLinkEvents(w.tx, { instanceId, userId: user.id, orgId: o.orgId, links: [link], fieldOf: () => `user_links[${i}]` });
        await w.push(instanceId, creator, events);
      });
      o.ok.userLinks.push({ userId: l.userId, idpId: l.idpId, externalUserId: l.providedUserId });
    });
  }
}

/** Machine users, without keys or PATs (they do not travel). */
export async function importMachineUsers(o: OrgImport): Promise<void> {
  for (const [i, entry] of (o.data.machineUsers ?? []).entries()) {
    const userId = entry.userId ?? "";
    await o.each("machine_user", userId, async () => {
      if (!userId) throw errors.invalidArgument("IMPORT-u1d1", `invalid machine_users[${i}].user_id: is required`);
      if (!(await alreadyThere(o.deps.db, "user", userId, o.req.instanceId))) {
        const u = entry.user ?? {};
        const username = u.userName?.trim();
        if (!username) throw errors.invalidArgument("IMPORT-m4ch", `invalid machine_users[${i}].user.user_name: is required`);
        const accessTokenType = fromWire("machineTokenType", u.accessTokenType || "ACCESS_TOKEN_TYPE_BEARER");
        if (!accessTokenType) throw errors.invalidArgument("IMPORT-m4tt", `invalid machine_users[${i}].user.access_token_type: unknown`);
        await createMachine(o.deps.es, {
          ...o.base,
          orgId: o.orgId,
          id: userId,
          machine: { username, name: u.name || username, description: u.description ?? "", accessTokenType },
        });
      }
      o.ok.machineUserIds.push(userId);
    });
  }
}

/** Users' metadata (after the users): an entry already there with its value counts as done. */
export async function importUserMetadata(o: OrgImport): Promise<void> {
  for (const [i, m] of (o.data.userMetadata ?? []).entries()) {
    await o.each("user_metadata", `${m.id ?? ""}:${m.key ?? ""}`, async () => {
      if (!m.id || !m.key) throw errors.invalidArgument("IMPORT-m3t0", `invalid user_metadata[${i}]: id and key are required`);
      const value = Buffer.from(m.value ?? "", "base64");
      const user = await o.deps.db.prisma.user.findFirst({ where: { id: m.id, orgId: o.orgId }, select: { id: true } });
      if (!user) throw errors.notFound("IMPORT-m3tu", `user_metadata[${i}].id: user "${m.id}" not found in organization "${o.orgId}"`);
      await setUserMetadata(o.deps.es, { ...o.base, userId: m.id, entries: [{ key: m.key, value }] });
      o.ok.userMetadata.push({ userId: m.id, key: m.key });
    });
  }
}
