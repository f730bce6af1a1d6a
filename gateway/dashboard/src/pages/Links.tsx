// Typed links between drawers: pick a drawer (by id or by a quick search), list its links,
// walk them (by type, depth, direction, as of a moment) as a tree, and, with the tier for it,
// create, end or delete links. The links table and a drawer reference are shared with the
// drawer page. This page holds the URL's drawer and the walk's settings; its parts live in
// ./links/.
import { useNavigate, useParams, useRouterState } from "@tanstack/react-router";
import { useState } from "react";
import { allows, useTier } from "../api/hooks";
import { CreateLink } from "./links/CreateLink";
import { DrawerPicker, Picked } from "./links/Picker";
import { DrawerLinks, Traversal, WalkControls } from "./links/Traverse";
import type { Walk } from "./links/shared";

// re-exported: these lived here, and other pages may still import them from ./Links

export type LinksParams = { drawer?: string };

/** The links page's search: the drawer it opens on (`?drawer=<id>`). */
export function readLinksParams(search: Record<string, unknown>): LinksParams {
  return { drawer: typeof search.drawer === "string" && search.drawer ? search.drawer : undefined };
}

/** The search that opens the links page on `drawer`. */
export function linksSearch(drawer: string): LinksParams {
  return { drawer };
}

export function LinksPage() {
  const { store } = useParams({ from: "/shell/s/$store/links" });
  return <LinksView key={store} store={store} />;
}

function LinksView({ store }: { store: string }) {
  const tier = useTier();
  const navigate = useNavigate();
  // the drawer shown is the URL's (?drawer=<id>), so a link or the back button can name it
  const drawerId = useRouterState({
    select: (state) => readLinksParams(state.location.search as Record<string, unknown>).drawer ?? "",
  });
  const setDrawerId = (id: string) =>
    void navigate({ to: "/s/$store/links", params: { store }, search: linksSearch(id) });
  const [walk, setWalk] = useState<Walk>({ types: [], depth: 2, direction: "LINK_DIRECTION_BOTH", asOf: "" });
  return (
    <div>
      <DrawerPicker store={store} current={drawerId} onPick={setDrawerId} />
      {drawerId && (
        <>
          <Picked store={store} id={drawerId} />
          <WalkControls walk={walk} onChange={setWalk} />
          <DrawerLinks store={store} id={drawerId} walk={walk} />
          <Traversal store={store} id={drawerId} walk={walk} onWalkFrom={setDrawerId} />
        </>
      )}
      {allows(tier, "write") && <CreateLink key={drawerId} store={store} from={drawerId} />}
    </div>
  );
}
