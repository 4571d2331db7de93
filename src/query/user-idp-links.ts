import type { Prisma as P } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { type ListWindow, type SearchPage, type Searchable, search } from "./list.js";
import { tableSources } from "./sources.js";

/** A user's account at an identity provider, as the links API shows it. */
const linkColumns = { idpId: true, externalUserId: true, displayName: true, createdAt: true } satisfies P.UserIdpLinkSelect;
export type UserIdpLinkView = P.UserIdpLinkGetPayload<{ select: typeof linkColumns }>;

// One user's links: the primary key (user, provider) finds them; no filters.
const links: Searchable<never, P.UserIdpLinkWhereInput, P.UserIdpLinkOrderByWithRelationInput, UserIdpLinkView> = {
  table: "userIdpLink",
  sources: tableSources.userIdpLink,
  filters: {},
  defaultSort: "createdAt",
  tieBreaker: ["idpId"],
  select: linkColumns,
};

/** The user's linked accounts, a page of them. */
export function searchUserIdpLinks(db: Database, cache: ProjectionCache, userId: string, window: ListWindow): Promise<SearchPage<UserIdpLinkView>> {
  return search(db, cache, links, [{ userId }], {}, window);
}
