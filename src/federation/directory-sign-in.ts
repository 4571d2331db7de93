import type { SignInLimits, TooManyFailures } from "../command/failure-limits.js";
import { limitedSignIn } from "../command/failure-limits.js";
import { countFailedPassword, type Lockout } from "../command/login.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { UserQueries } from "../query/users.js";
import type { Database } from "../storage/database.js";
import { DirectoryUnreachable, type LdapFederation, ldapSettingsOf } from "./ldap.js";
import type { ExternalUser, StoredProvider } from "./provider.js";

/** What a directory said: who signed in; or that it could not be asked (why, for the log). */
export type DirectoryAnswer = { user: ExternalUser } | { unreachable: string };

/**
 * A login name and password checked at a directory, counted as a local password is (the login UI's LDAP form and
 * the intents API both): toward the failure limits of the address and of the login name at that directory, and
 * toward the lockout of the account linked to the entry when only the password was wrong. Undefined for a wrong
 * login name or password; a directory that cannot be asked counts nothing (no guess was checked).
 */
export async function directorySignIn(
  deps: { es: EventStore; db: Database; users: UserQueries; directories: LdapFederation },
  a: { instanceId: string; provider: StoredProvider; loginName: string; password: string; limits: SignInLimits | undefined; lockout: Lockout },
): Promise<DirectoryAnswer | undefined | TooManyFailures> {
  return limitedSignIn(a.limits, `ldap:${a.provider.id}:${a.loginName.toLowerCase()}`, async (): Promise<DirectoryAnswer | undefined> => {
    let answer: Awaited<ReturnType<LdapFederation["signIn"]>>;
    try {
      answer = await deps.directories.signIn(ldapSettingsOf(a.provider), a.loginName, a.password);
    } catch (e) {
      return { unreachable: `${e instanceof DirectoryUnreachable ? "" : "the service account's bind or the search failed: "}${(e as Error).message}` };
    }
    if ("user" in answer) return answer;
    const linked = answer.wrongFor && (await deps.users.byExternalAccount(a.instanceId, a.provider.id, answer.wrongFor));
    if (linked) await countFailedPassword(deps.es, deps.db, a.lockout, linked.id);
    return undefined;
  });
}
