import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

const channelOn = (channel: string) => async (tx: Tx, e: StoredEvent<object>) => {
  const data = { instanceId: e.instanceId, orgId: e.resourceOwner };
  await tx.userOtpChannel.upsert({
    where: { userId_channel: { userId: e.aggregateId, channel } },
    create: { userId: e.aggregateId, channel, ...data },
    update: data,
  });
};
const channelOff = (channel: string) => async (tx: Tx, e: StoredEvent<object>) => {
  await tx.userOtpChannel.deleteMany({ where: { userId: e.aggregateId, channel } });
};

/** The one-time-code factors (e-mail, SMS) a user turned on. */
export const userOtpChannels = defineProjection("userOtpChannel", 1, (on) => {
  on(events.otpEmailAdded, channelOn("email"));
  on(events.otpEmailRemoved, channelOff("email"));
  on(events.otpSmsAdded, channelOn("sms"));
  on(events.otpSmsRemoved, channelOff("sms"));
  on(events.userRemoved, async (tx, e) => {
    await tx.userOtpChannel.deleteMany({ where: { userId: e.aggregateId } });
  });
  // Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.userOtpChannel.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
    await tx.userOtpChannel.deleteMany({ where: { orgId: e.aggregateId } });
  });
});
