// Picking the drawer whose links are shown (by id or a quick search), and a preview of it.
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { api } from "../../api/client";
import { Card, ErrorNote, Loading, PinBadge } from "../../components/ui";
import { DrawerRef } from "./DrawerRef";
import { drawerQuery } from "./shared";

export function DrawerPicker({ store, current, onPick }: { store: string; current: string; onPick: (id: string) => void }) {
  const [id, setId] = useState(current);
  const [seen, setSeen] = useState(current);
  if (seen !== current) {
    // another drawer was opened (a link, the back button): show its id
    setSeen(current);
    setId(current);
  }
  const [text, setText] = useState("");
  const [query, setQuery] = useState("");
  const found = useQuery({
    queryKey: ["link-pick", store, query],
    queryFn: () =>
      api("post", "/v1/stores/{store}/search", {
        path: { store },
        body: { query, n_results: 10, min_score: 0, include_deprecated: true },
      }),
    enabled: query !== "",
    staleTime: 30_000,
  });
  const hits = found.data?.results ?? [];
  return (
    <Card title={`links · ${store}`}>
      <div className="grid-cols">
        <form
          className="row"
          onSubmit={(event) => {
            event.preventDefault();
            onPick(id.trim());
          }}
        >
          <div style={{ flex: "1 1 260px" }}>
            <label className="label" htmlFor="link-drawer-id">
              drawer id
            </label>
            <input id="link-drawer-id" type="text" value={id} onChange={(e) => setId(e.target.value)} placeholder="d_…" />
          </div>
          <div>
            <button type="submit" className="primary" disabled={!id.trim()}>
              show links
            </button>
          </div>
        </form>
        <form
          className="row"
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            setQuery(text.trim());
          }}
        >
          <div style={{ flex: "1 1 260px" }}>
            <label className="label" htmlFor="link-drawer-find">
              or find a drawer by what it says
            </label>
            <input id="link-drawer-find" type="search" value={text} onChange={(e) => setText(e.target.value)} />
          </div>
          <div>
            <button type="submit" disabled={!text.trim()}>
              find
            </button>
          </div>
        </form>
      </div>
      {found.isLoading && <Loading what="matches" />}
      <ErrorNote error={found.error} />
      {found.data && hits.length === 0 && <p className="muted">no drawer matches that text</p>}
      {hits.length > 0 && (
        <table aria-label="matching drawers">
          <thead>
            <tr>
              <th>drawer</th>
              <th>type</th>
              <th>content</th>
              <th>pick</th>
            </tr>
          </thead>
          <tbody>
            {hits.map((hit) => {
              const drawer = hit.drawer ?? {};
              return (
                <tr key={drawer.id}>
                  <td>
                    <DrawerRef store={store} id={drawer.id ?? ""} />
                  </td>
                  <td>
                    <span className="badge">{drawer.memory_type}</span> <PinBadge pin={drawer.pin_status} />
                  </td>
                  <td>{(drawer.content ?? "").slice(0, 160)}</td>
                  <td>
                    <button
                      type="button"
                      aria-label={`${drawer.id === current ? "picked" : "pick"} drawer ${drawer.id}`}
                      onClick={() => {
                        setId(drawer.id ?? "");
                        onPick(drawer.id ?? "");
                      }}
                    >
                      {drawer.id === current ? "picked" : "pick"}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Card>
  );
}

export function Picked({ store, id }: { store: string; id: string }) {
  const drawer = useQuery(drawerQuery(store, id));
  return (
    <Card title="drawer">
      {drawer.isLoading && <Loading what="the drawer" />}
      <ErrorNote error={drawer.error} />
      {drawer.data && (
        <p>
          <span className="badge">{drawer.data.memory_type}</span> <PinBadge pin={drawer.data.pin_status} />{" "}
          <Link to="/s/$store/drawers/$id" params={{ store, id }}>
            <code>{id}</code>
          </Link>{" "}
          <span className="count">
            {drawer.data.wing} / {drawer.data.room}
          </span>
          <br />
          {drawer.data.content}
        </p>
      )}
    </Card>
  );
}
