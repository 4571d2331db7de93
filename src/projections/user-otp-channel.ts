import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import { orgRemoved, otpEmailAdded, otpEmailRemoved, otpSmsAdded, otpSmsRemoved, userRemoved } from "../events/index.js";
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
  on(otpEmailAdded, channelOn("email"));
  on(otpEmailRemoved, channelOff("email"));
  on(otpSmsAdded, channelOn("sms"));
  on(otpSmsRemoved, channelOff("sms"));
  on(userRemoved, async (tx, e) => {
    await tx.userOtpChannel.deleteMany({ where: { userId: e.aggregateId } });
  });
  // Reads the organisation's users: before users.
  on(orgRemoved, async (tx, e) => {
    await tx.userOtpChannel.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
    await tx.userOtpChannel.deleteMany({ where: { orgId: e.aggregateId } });
  });
});
