import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { OwnerSchema, OwnerType, type Owner } from "../../gen/svc/object/v3alpha/object_pb.js";
import { DetailsSchema as SettingsDetailsSchema, type Details as SettingsDetails } from "../../gen/svc/settings/object/v3alpha/object_pb.js";
import type { SettingsOwner } from "../query/settings.js";

const ownerTypes = { system: OwnerType.SYSTEM, instance: OwnerType.INSTANCE, org: OwnerType.ORG } as const;

export function toOwner(o: SettingsOwner): Owner {
  return create(OwnerSchema, { type: ownerTypes[o.type], id: o.id });
}

export function toSettingsDetails(d: { sequence: number; changeDate: Date | undefined; owner: SettingsOwner }): SettingsDetails {
  return create(SettingsDetailsSchema, {
    sequence: BigInt(d.sequence),
    owner: toOwner(d.owner),
    ...(d.changeDate ? { changeDate: timestampFromDate(d.changeDate) } : {}),
  });
}

export const sameOwner = (a: SettingsOwner | undefined, b: SettingsOwner) => !!a && a.type === b.type && a.id === b.id;
