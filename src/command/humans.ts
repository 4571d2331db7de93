import type { User } from "../../gen/prisma/client.js";
import { errors } from "../errors/errors.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { Decision } from "./aggregate.js";
import { changeUser } from "./user-aggregate.js";

/**
 * The shape of every change to a human's own credentials and addresses (codes, second factors, passwords):
 * a change to the user (`changeUser`: locked and loaded fresh; NOT_FOUND when it is gone), FAILED_PRECONDITION
 * naming `what` for a machine user.
 */
export function changeHuman(es: EventStore, a: { instanceId: string; userId: string; creator: string }, what: string, decide: Decision<User, "user">) {
  return changeUser(es, { instanceId: a.instanceId, id: a.userId, creator: a.creator }, (u, w) => {
    if (u.kind !== "human") throw errors.failedPrecondition("HUMAN-k1nd", `only human users have ${what}; user "${u.id}" is a ${u.kind}`);
    return decide(u, w);
  });
}
