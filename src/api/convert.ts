import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { OwnerSchema, OwnerType, type Owner } from "../../gen/svc/object/v3alpha/object_pb.js";
import { DetailsSchema as ResourceDetailsSchema, type Details as ResourceDetails } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import { DetailsSchema as SettingsDetailsSchema, type Details as SettingsDetails } from "../../gen/svc/settings/object/v3alpha/object_pb.js";
import type { ContextOwner } from "../domain/contexts.js";

const ownerTypes = { system: OwnerType.SYSTEM, instance: OwnerType.INSTANCE, org: OwnerType.ORG } as const;

export function toOwner(o: ContextOwner): Owner {
  return create(OwnerSchema, { type: ownerTypes[o.type], id: o.id });
}

export function toSettingsDetails(d: { sequence: number; changeDate: Date | undefined; owner: ContextOwner }): SettingsDetails {
  return create(SettingsDetailsSchema, {
    sequence: BigInt(d.sequence),
    owner: toOwner(d.owner),
    ...(d.changeDate ? { changeDate: timestampFromDate(d.changeDate) } : {}),
  });
}

/** Details of a resource that lives in an organisation (or, for organisations themselves, in the instance). */
export function toResourceDetails(
  d: { id: string; sequence: number; changeDate: Date; resourceOwner: string },
  ownerType: "org" | "instance",
): ResourceDetails {
  return create(ResourceDetailsSchema, {
    id: d.id,
    sequence: BigInt(d.sequence),
    changeDate: timestampFromDate(d.changeDate),
    resourceOwner: toOwner({ type: ownerType, id: d.resourceOwner }),
  });
}

/** Details of a projection row of an organisation's resource (`id`: the resource's, which is the row's ID or its key). */
export function orgRowDetails(id: string, row: { sequence: number; changeDate: Date; orgId: string }): ResourceDetails {
  return toResourceDetails({ id, sequence: row.sequence, changeDate: row.changeDate, resourceOwner: row.orgId }, "org");
}
