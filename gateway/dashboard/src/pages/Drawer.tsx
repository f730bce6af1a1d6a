// One drawer, whole: its content (signature marked), its metadata with the salience decay it is
// on, the provenance log, its links and supersession chain, the raw sessions it was derived
// from, and the actions the token's tier allows (record a retrieval, pin / unpin / deprecate,
// edit, delete). This page holds the layout and the content card; its parts live in ./drawer/.
import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "@tanstack/react-router";
import type { S } from "../api/client";
import { Card, ErrorNote, Highlighted, Loading, PinBadge } from "../components/ui";
import { Actions } from "./drawer/Actions";
import { DrawerLinks, SupersessionChain } from "./drawer/Chain";
import { MetaSidebar } from "./drawer/Metadata";
import { Provenance } from "./drawer/Provenance";
import { DerivedFrom } from "./drawer/Sources";
import { drawerQuery } from "./links/shared";

type Drawer = S<"engram.v1.Drawer">;

export function DrawerPage() {
  const { store, id } = useParams({ from: "/shell/s/$store/drawers/$id" });
  // one view per drawer: moving to another drawer starts its forms and toggles afresh
  return <DrawerView key={`${store}/${id}`} store={store} id={id} />;
}

function DrawerView({ store, id }: { store: string; id: string }) {
  const drawer = useQuery(drawerQuery(store, id));
  const data = drawer.data;
  return (
    <div>
      <p>
        <Link to="/s/$store/drawers" params={{ store }}>
          ← drawers
        </Link>
      </p>
      {drawer.isLoading && <Loading what="the drawer" />}
      <ErrorNote error={drawer.error} />
      {data && (
        <div className="grid-2 drawer-grid">
          <div>
            <ContentCard drawer={data} />
            <Actions store={store} drawer={data} />
            <Provenance store={store} id={id} />
            <DrawerLinks store={store} id={id} />
            <SupersessionChain store={store} id={id} />
            <DerivedFrom store={store} drawer={data} />
          </div>
          <MetaSidebar drawer={data} />
        </div>
      )}
    </div>
  );
}

function ContentCard({ drawer }: { drawer: Drawer }) {
  return (
    <Card title="drawer">
      <div className="hit-head">
        <code>{drawer.id}</code>
        <span className="badge">{drawer.memory_type}</span>
        <PinBadge pin={drawer.pin_status} />
        <span className="count">
          {drawer.wing} / {drawer.room}
        </span>
      </div>
      <p className="drawer-body">
        <Highlighted content={drawer.content ?? ""} phrase={drawer.signature} />
      </p>
      {drawer.signature ? (
        <p className="muted">
          signature (canonical write): <mark className="signature">{drawer.signature}</mark>
        </p>
      ) : (
        <p className="muted">no signature: an ambient write</p>
      )}
    </Card>
  );
}
