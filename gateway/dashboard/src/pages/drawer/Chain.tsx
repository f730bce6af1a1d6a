// The drawer's links (both ends, with the way to the explorer) and its supersession chain.
import { useQueries, useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { api, type S } from "../../api/client";
import { Card, ErrorNote, Loading, PinBadge } from "../../components/ui";
import { linksSearch } from "../Links";
import { DrawerRef } from "../links/DrawerRef";
import { LinksTable } from "../links/LinkTable";
import { drawerQuery, linkState } from "../links/shared";

export function DrawerLinks({ store, id }: { store: string; id: string }) {
  const links = useQuery({
    queryKey: ["drawer", store, id, "links"],
    queryFn: () => api("get", "/v1/stores/{store}/drawers/{drawer_id}/links", { path: { store, drawer_id: id } }),
  });
  return (
    <Card
      title="links"
      actions={
        <Link to="/s/$store/links" params={{ store }} search={linksSearch(id)}>
          links explorer
        </Link>
      }
    >
      {links.isLoading && <Loading what="links" />}
      <ErrorNote error={links.error} />
      {links.data && <LinksTable store={store} links={links.data.links ?? []} focus={id} />}
    </Card>
  );
}

/** Drawers of a supersession chain, newest first: a drawer comes before every drawer it
 * supersedes (links run from the newer to the older). */
function chainOrder(ids: string[], links: S<"engram.v1.DrawerLink">[]): string[] {
  const older = new Map<string, number>(ids.map((id) => [id, 0]));
  for (const link of links) older.set(link.to_id ?? "", (older.get(link.to_id ?? "") ?? 0) + 1);
  const order: string[] = [];
  const ready = ids.filter((id) => !older.get(id));
  while (ready.length) {
    const id = ready.shift()!;
    order.push(id);
    for (const link of links) {
      if (link.from_id !== id) continue;
      const left = (older.get(link.to_id ?? "") ?? 0) - 1;
      older.set(link.to_id ?? "", left);
      if (left === 0) ready.push(link.to_id ?? "");
    }
  }
  return [...order, ...ids.filter((id) => !order.includes(id))]; // a cycle keeps the walk's order
}

export function SupersessionChain({ store, id }: { store: string; id: string }) {
  const walk = useQuery({
    queryKey: ["links", store, "chain", id],
    queryFn: () =>
      api("post", "/v1/stores/{store}/links:traverse", {
        path: { store },
        body: { drawer_id: id, types: ["LINK_TYPE_SUPERSEDES"], depth: 5, direction: "LINK_DIRECTION_BOTH" },
      }),
  });
  const links = walk.data?.links ?? [];
  const ids = chainOrder(walk.data?.drawer_ids ?? [], links);
  const others = ids.filter((other) => other !== id).slice(0, 20);
  const previews = useQueries({ queries: others.map((other) => ({ ...drawerQuery(store, other), retry: false })) });
  const preview = new Map(others.map((other, i) => [other, previews[i]]));
  return (
    <Card title="supersession chain">
      {walk.isLoading && <Loading what="the chain" />}
      <ErrorNote error={walk.error} />
      {walk.data && links.length === 0 && <p className="muted">nothing supersedes this drawer and it supersedes nothing</p>}
      {links.length > 0 && (
        <>
          <p className="muted">newest first, up to five links away; “B supersedes A” withholds A from search outside history intents.</p>
          <ol className="chain">
            {ids.map((drawerId) => {
              const shown = preview.get(drawerId);
              const supersedes = links.filter((l) => l.from_id === drawerId);
              return (
                <li key={drawerId} aria-current={drawerId === id ? "true" : undefined}>
                  <DrawerRef store={store} id={drawerId} self={drawerId === id} />{" "}
                  {shown?.data && (
                    <>
                      <span className="badge">{shown.data.memory_type}</span> <PinBadge pin={shown.data.pin_status} />{" "}
                      {(shown.data.content ?? "").slice(0, 160)}
                    </>
                  )}
                  {shown?.error && <span className="muted">(cannot be read: {String((shown.error as Error).message)})</span>}
                  {supersedes.map((link) => (
                    <div key={link.id} className="count">
                      supersedes <DrawerRef store={store} id={link.to_id ?? ""} self={link.to_id === id} /> · {linkState(link)}
                      {link.reason ? ` · ${link.reason}` : ""}
                    </div>
                  ))}
                </li>
              );
            })}
          </ol>
        </>
      )}
    </Card>
  );
}
