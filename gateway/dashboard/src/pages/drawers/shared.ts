// What the drawers page's parts share: the filter (the search less the page) and its list query.
import type { S } from "../../api/client";
import type { DrawersParams } from "../Drawers";

type PinStatus = S<"engram.v1.PinStatus">;

export type Filter = Omit<DrawersParams, "page">;

function pinEnum(pin: string): PinStatus {
  return `PIN_STATUS_${pin.toUpperCase()}` as PinStatus;
}

export function listQuery(filter: Filter) {
  return {
    wing: filter.wing,
    room: filter.room,
    memory_types: filter.type ? [filter.type] : undefined,
    pin_statuses: filter.pin ? [pinEnum(filter.pin)] : undefined,
    topic: filter.topic,
    added_by: filter.by,
    derived_from_session: filter.session,
  };
}
