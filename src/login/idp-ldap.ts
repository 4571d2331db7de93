import { isTooManyFailures } from "../command/failure-limits.js";
import { directorySignIn } from "../federation/directory-sign-in.js";
import type { LdapFederation } from "../federation/ldap.js";
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
    const outcome = await directorySignIn(
      { es, db, users: kit.users, directories },
      { instanceId: instance.id, provider: external.storedOf(row), loginName, password, limits: c.limits, lockout: kit.lockoutOf(instance.id) },
    );
    if (isTooManyFailures(outcome)) return c.tooMany(outcome);
    if (!outcome) return again(c.page.t.wrongCredentials, 401);
    if ("unreachable" in outcome) {
      kit.ui.log.warn({ idp: row.id, reason: outcome.unreachable }, "external sign-in: the directory could not be asked");
      return again(c.page.t.externalFailed, 400);
    }
    return external.signInAs(c, reply, instance, row, outcome.user);
  });
}
