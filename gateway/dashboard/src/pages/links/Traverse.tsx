// The walk: its controls, the drawer's links under them, and the traversal as a tree.
import { useQueries, useQuery } from "@tanstack/react-query";
import { api, type S } from "../../api/client";
import { Card, ErrorNote, Loading, PinBadge, when } from "../../components/ui";
import { DrawerRef } from "./DrawerRef";
import { LinksTable } from "./LinkTable";
import { DIRECTIONS, LINK_TYPES, drawerQuery, instant, linkState, linkTypeName, type Direction, type DrawerLink, type LinkType, type Walk } from "./shared";

export function WalkControls({ walk, onChange }: { walk: Walk; onChange: (walk: Walk) => void }) {
  const toggle = (type: LinkType) =>
    onChange({ ...walk, types: walk.types.includes(type) ? walk.types.filter((t) => t !== type) : [...walk.types, type] });
  return (
    <Card title="which links">
      <div className="row">
        <fieldset className="type-set">
          <legend className="label">link types (none checked: every type)</legend>
          {LINK_TYPES.map((type) => (
            <label key={type.value} className="check">
              <input type="checkbox" checked={walk.types.includes(type.value)} onChange={() => toggle(type.value)} />{" "}
              {type.name}
            </label>
          ))}
        </fieldset>
        <div>
          <label className="label" htmlFor="walk-depth">
            depth (1–5)
          </label>
          <input
            id="walk-depth"
            type="number"
            min={1}
            max={5}
            style={{ width: "5em", minWidth: 0 }}
            value={walk.depth}
            onChange={(e) => onChange({ ...walk, depth: Math.min(5, Math.max(1, Number(e.target.value) || 1)) })}
          />
        </div>
        <div>
          <label className="label" htmlFor="walk-direction">
            direction
          </label>
          <select
            id="walk-direction"
            value={walk.direction}
            onChange={(e) => onChange({ ...walk, direction: e.target.value as Direction })}
          >
            {DIRECTIONS.map((d) => (
              <option key={d.value} value={d.value}>
                {d.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label className="label" htmlFor="walk-as-of">
            as of (your local time; empty: every link, ended ones too)
          </label>
          <input id="walk-as-of" type="datetime-local" value={walk.asOf} onChange={(e) => onChange({ ...walk, asOf: e.target.value })} />
        </div>
      </div>
    </Card>
  );
}

export function DrawerLinks({ store, id, walk }: { store: string; id: string; walk: Walk }) {
  const asOf = instant(walk.asOf);
  const links = useQuery({
    queryKey: ["links", store, "list", id, walk.types, asOf],
    queryFn: () =>
      api("get", "/v1/stores/{store}/drawers/{drawer_id}/links", {
        path: { store, drawer_id: id },
        query: { types: walk.types.length ? walk.types : undefined, as_of: asOf },
      }),
  });
  return (
    <Card title="its links · both ends">
      {links.isLoading && <Loading what="links" />}
      <ErrorNote error={links.error} />
      {links.data && <LinksTable store={store} links={links.data.links ?? []} focus={id} />}
    </Card>
  );
}

type TreeNode = { id: string; via?: DrawerLink; outgoing: boolean; repeat: boolean; children: TreeNode[] };

/** The walk as a tree: each link hangs under whichever end was reached first (the response
 * lists links in the order first reached); a link between two drawers already shown is a
 * leaf marked "already shown". */
export function walkTree(start: string, links: DrawerLink[]): TreeNode {
  const root: TreeNode = { id: start, outgoing: true, repeat: false, children: [] };
  const reached = new Map<string, TreeNode>([[start, root]]);
  for (const link of links) {
    const from = link.from_id ?? "";
    const to = link.to_id ?? "";
    const parent = reached.get(from) ?? reached.get(to) ?? root;
    const outgoing = parent.id === from;
    const other = outgoing ? to : from;
    const repeat = reached.has(other);
    const node: TreeNode = { id: other, via: link, outgoing, repeat, children: [] };
    if (!repeat) reached.set(other, node);
    parent.children.push(node);
  }
  return root;
}

const PREVIEWS = 40; // drawers fetched for a one-line preview; the rest show their id only

export function Traversal({
  store,
  id,
  walk,
  onWalkFrom,
}: {
  store: string;
  id: string;
  walk: Walk;
  onWalkFrom: (id: string) => void;
}) {
  const asOf = instant(walk.asOf);
  const run = useQuery({
    queryKey: ["links", store, "traverse", id, walk.types, walk.depth, walk.direction, asOf],
    queryFn: () =>
      api("post", "/v1/stores/{store}/links:traverse", {
        path: { store },
        body: { drawer_id: id, types: walk.types, depth: walk.depth, direction: walk.direction, as_of: asOf },
      }),
  });
  const reachedIds = (run.data?.drawer_ids ?? []).slice(0, PREVIEWS);
  const previews = useQueries({ queries: reachedIds.map((drawer) => ({ ...drawerQuery(store, drawer), retry: false })) });
  const preview = new Map(reachedIds.map((drawer, i) => [drawer, previews[i]?.data]));
  const tree = run.data ? walkTree(id, run.data.links ?? []) : undefined;
  return (
    <Card title={`walk · depth ${walk.depth}`}>
      {run.isLoading && <Loading what="the walk" />}
      <ErrorNote error={run.error} />
      {run.data && (
        <p className="muted">
          {(run.data.links ?? []).length} links walked · {(run.data.drawer_ids ?? []).length} drawers reached
        </p>
      )}
      {tree && tree.children.length === 0 && <p className="muted">no link leads anywhere from here</p>}
      {tree && tree.children.length > 0 && (
        <ul className="link-tree" aria-label="links walked">
          <TreeItem store={store} node={tree} preview={preview} onWalkFrom={onWalkFrom} root />
        </ul>
      )}
    </Card>
  );
}

function TreeItem({
  store,
  node,
  preview,
  onWalkFrom,
  root,
}: {
  store: string;
  node: TreeNode;
  preview: Map<string, S<"engram.v1.Drawer"> | undefined>;
  onWalkFrom: (id: string) => void;
  root?: boolean;
}) {
  const drawer = preview.get(node.id);
  return (
    <li>
      <div className="tree-node">
        {node.via && (
          <span className="badge" title={node.outgoing ? "outgoing: the drawer above says this of it" : "incoming: it says this of the drawer above"}>
            {node.outgoing ? "→" : "←"} {linkTypeName(node.via.type, !node.outgoing)}
          </span>
        )}{" "}
        {root ? <strong>start</strong> : null} <DrawerRef store={store} id={node.id} />{" "}
        {drawer && (
          <>
            <span className="badge">{drawer.memory_type}</span> <PinBadge pin={drawer.pin_status} />{" "}
            <span>{(drawer.content ?? "").slice(0, 140)}</span>
          </>
        )}
        {node.repeat && <span className="muted"> (already shown above)</span>}
        {!root && !node.repeat && (
          <button type="button" className="linklike walk-from" onClick={() => onWalkFrom(node.id)} aria-label={`walk from here: ${node.id}`}>
            walk from here
          </button>
        )}
        {node.via && (
          <div className="count">
            {node.via.id} · from {when(node.via.valid_from)} · {linkState(node.via)}
            {node.via.reason ? ` · ${node.via.reason}` : ""}
          </div>
        )}
      </div>
      {node.children.length > 0 && (
        <ul>
          {node.children.map((child, i) => (
            <TreeItem key={`${child.via?.id ?? ""}-${i}`} store={store} node={child} preview={preview} onWalkFrom={onWalkFrom} />
          ))}
        </ul>
      )}
    </li>
  );
}
