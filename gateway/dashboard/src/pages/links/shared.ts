// What the link parts share: link types and directions, the drawer query, link state, the walk.
import { useQueryClient } from "@tanstack/react-query";
import { api, type S } from "../../api/client";
import { when } from "../../components/ui";

export type LinkType = S<"engram.v1.LinkType">;
export type DrawerLink = S<"engram.v1.DrawerLink">;
export type Direction = S<"engram.v1.LinkDirection">;

/** Every link type an operator can choose (UNSPECIFIED is the wire's "none"). */
export const LINK_TYPES: { value: LinkType; name: string; inverse: string }[] = [
  { value: "LINK_TYPE_SUPERSEDES", name: "supersedes", inverse: "superseded by" },
  { value: "LINK_TYPE_CAUSED_BY", name: "caused by", inverse: "causes" },
  { value: "LINK_TYPE_RELATES_TO", name: "relates to", inverse: "relates to" },
  { value: "LINK_TYPE_IMPLEMENTS", name: "implements", inverse: "implemented by" },
  { value: "LINK_TYPE_REVERTS", name: "reverts", inverse: "reverted by" },
  { value: "LINK_TYPE_CONTRADICTS", name: "contradicts", inverse: "contradicted by" },
];

export const DIRECTIONS: { value: Direction; name: string }[] = [
  { value: "LINK_DIRECTION_BOTH", name: "both" },
  { value: "LINK_DIRECTION_OUTGOING", name: "outgoing (from the drawer)" },
  { value: "LINK_DIRECTION_INCOMING", name: "incoming (to the drawer)" },
];

/** "supersedes" for LINK_TYPE_SUPERSEDES; the inverse reading ("superseded by") when asked. */
export function linkTypeName(type: LinkType | undefined, inverse = false): string {
  const known = LINK_TYPES.find((t) => t.value === type);
  if (!known) return (type ?? "").replace("LINK_TYPE_", "").toLowerCase() || "unspecified";
  return inverse ? known.inverse : known.name;
}

/** The one query for a drawer, shared by every page that shows one (cache key included). */
export function drawerQuery(store: string, id: string) {
  return {
    queryKey: ["drawer", store, id],
    queryFn: () => api("get", "/v1/stores/{store}/drawers/{id}", { path: { store, id } }),
    enabled: store !== "" && id !== "",
    staleTime: 15_000,
  };
}

/** Whether a link holds now: "holds" (or "holds until …"), "ended …", or "starts …" (not yet in force). */
export function linkState(link: DrawerLink, now = Date.now()): string {
  const from = link.valid_from ? Date.parse(link.valid_from) : Number.NaN;
  const to = link.valid_to ? Date.parse(link.valid_to) : Number.NaN;
  if (!Number.isNaN(to) && to <= now) return `ended ${when(link.valid_to)}`;
  if (!Number.isNaN(from) && from > now) return `starts ${when(link.valid_from)}`;
  return Number.isNaN(to) ? "holds" : `holds until ${when(link.valid_to)}`;
}

/** Invalidate everything that shows links of this store (link lists, traversals, drawer pages). */
export function useLinksChanged(store: string) {
  const queries = useQueryClient();
  return () => {
    void queries.invalidateQueries({ queryKey: ["links", store] });
    void queries.invalidateQueries({ queryKey: ["drawer", store] });
  };
}

/** A datetime-local value (the operator's clock) as an RFC 3339 instant; "" stays unset. */
export function instant(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export type Walk = { types: LinkType[]; depth: number; direction: Direction; asOf: string };
