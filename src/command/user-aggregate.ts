import type { User } from "../../gen/prisma/client.js";
import { errors } from "../errors/errors.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { changeAggregate, type Decision } from "./aggregate.js";

/**
 * The common shape of every change to one user (human or machine): the user aggregate, locked and loaded fresh;
 * NOT_FOUND when it is gone. Below users.ts and humans.ts, which both change users through it.
 */
export function changeUser(es: EventStore, a: { instanceId: string; id: string; creator: string }, decide: Decision<User, "user">) {
  return changeAggregate(es, {
    aggregateType: "user",
    ...a,
    load: (w) => w.tx.user.findUnique({ where: { id: a.id } }),
    notFound: () => errors.notFound("USER-n0tf", `user "${a.id}" not found`),
    ownerOf: (u) => u.orgId,
    decide,
  });
}
