import { isTooManyFailures, limitedSignIn } from "../command/failure-limits.js";
import { countFailedPassword } from "../command/login.js";
import { DirectoryUnreachable, type LdapFederation, ldapSettingsOf } from "../federation/ldap.js";
import type { ExternalUser } from "../federation/provider.js";
import * as pages from "../web/pages.js";
import type { ExternalSignIn } from "./idp.js";
import { LOGIN_PATH, type LoginKit } from "./kit.js";

/**
 * Sign-in through a directory (an LDAP provider) in the login UI: its form (the provider's button leads there,
 * src/login/idp.ts), checked at the directory, then the account as the provider's options say. A wrong
 * password counts as a local one does: toward the sign-in failure limits of the address and the login name,
 * and toward the lockout of the account linked to the directory's entry.
 */
export function registerDirectorySignIn(kit: LoginKit, external: ExternalSignIn, directories: LdapFederation): void {
  const { db, es } = kit.deps;

  kit.post(`${LOGIN_PATH}/ldap`, async (c, reply, instance) => {
    const row = await external.usableProvider(c, instance, c.fields.idpId);
    if (!row?.type || external.storedOf(row).kind !== "ldap") return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    const loginName = (c.fields.loginName ?? "").trim().slice(0, 200);
    const password = (c.fields.password ?? "").slice(0, 1000);
    const again = (error: string, status: number) => c.send(pages.directoryPage(c.page, { idpId: row.id, name: row.name, loginName, error }), status);
    const outcome = await limitedSignIn(c.limits, `ldap:${row.id}:${loginName.toLowerCase()}`, async (): Promise<Checked | undefined> => {
      try {
        const answer = await directories.signIn(ldapSettingsOf(external.storedOf(row)), loginName, password);
        if ("user" in answer) return answer;
        if (answer.wrongFor) await countForLinkedAccount(instance.id, row.id, answer.wrongFor);
        return undefined;
      } catch (e) {
        // The directory could not be asked (or refused the service account): no guess was checked, none counts.
        kit.ui.log.warn(
          { idp: row.id, reason: (e as Error).message, unreachable: e instanceof DirectoryUnreachable },
          "external sign-in: the directory could not be asked",
        );
        return { unreachable: true };
      }
    });
    if (isTooManyFailures(outcome)) return c.tooMany(outcome);
    if (!outcome) return again(c.page.t.wrongCredentials, 401);
    if ("unreachable" in outcome) return again(c.page.t.externalFailed, 400);
    return external.signInAs(c, reply, instance, row, outcome.user);
  });

  /** A wrong password for a directory entry that is linked here counts toward that account's lockout. */
  async function countForLinkedAccount(instanceId: string, idpId: string, externalUserId: string) {
    const linked = await kit.users.byExternalAccount(instanceId, idpId, externalUserId);
    if (linked) await countFailedPassword(es, db, kit.lockoutOf(instanceId), linked.id);
  }
}

/** What the directory said, when it could be asked: who signed in; or that it could not be asked. */
type Checked = { user: ExternalUser } | { unreachable: true };
