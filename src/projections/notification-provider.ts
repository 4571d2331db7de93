import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** An instance's SMTP and SMS providers (the secret sealed). */
export const notificationProviders = defineProjection("notificationProvider", 1, (on) => {
  on(events.notificationProviderAdded, async (tx, e) => {
    const p = e.payload;
    await tx.notificationProvider.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        kind: p.kind,
        providerType: p.providerType,
        description: p.description,
        config: p.config as object,
        secret: p.secret,
        active: false,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.notificationProviderChanged, async (tx, e) => {
    const { config, ...rest } = e.payload;
    await tx.notificationProvider.update({
      where: { id: e.aggregateId },
      data: { ...rest, ...(config ? { config: config as object } : {}), sequence: e.sequence, changeDate: e.createdAt },
    });
  });
  on(events.notificationProviderActivated, async (tx, e) => {
    await tx.notificationProvider.update({ where: { id: e.aggregateId }, data: { active: true, sequence: e.sequence, changeDate: e.createdAt } });
  });
  on(events.notificationProviderDeactivated, async (tx, e) => {
    await tx.notificationProvider.update({ where: { id: e.aggregateId }, data: { active: false, sequence: e.sequence, changeDate: e.createdAt } });
  });
  on(events.notificationProviderRemoved, async (tx, e) => {
    await tx.notificationProvider.delete({ where: { id: e.aggregateId } });
  });
});
