// The frame around every page: the store selector with its mode badge, the live system
// signal, the left rail (pages the token's tier can use), and the store's wings and rooms.
import { Link, Outlet, useNavigate, useParams, useRouterState } from "@tanstack/react-router";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { setToken } from "../api/client";
import { allows, useStats, useStores, useSystem, useTier, useWhoAmI, type TierName } from "../api/hooks";
import { JobsPanel, JobsProvider } from "./Jobs";
import { ModeBadge, bytes } from "./ui";

const STORE_PAGES = [
  { to: "/s/$store/search", label: "search", needs: "read" },
  { to: "/s/$store/drawers", label: "drawers", needs: "read" },
  { to: "/s/$store/raw", label: "raw", needs: "read" },
  { to: "/s/$store/corpus", label: "corpus", needs: "read" },
  { to: "/s/$store/authoring", label: "authoring", needs: "read" },
  { to: "/s/$store/links", label: "links", needs: "read" },
  { to: "/s/$store/insight", label: "insight", needs: "read" },
] as const satisfies readonly { to: string; label: string; needs: TierName }[];

function currentStore(): string {
  const params = useParams({ strict: false }) as { store?: string };
  return params.store ?? "";
}

function StoreSelector() {
  const store = currentStore();
  const stores = useStores();
  const navigate = useNavigate();
  const path = useRouterState({ select: (state) => state.location.pathname });
  const page = /\/s\/[^/]+\/([^/]+)/.exec(path)?.[1] ?? "search";
  const list = stores.data?.stores ?? [];
  const mode = list.find((s) => s.spec?.name === store)?.spec?.deployment_mode;
  return (
    <div className="store-selector">
      <label htmlFor="store-select" className="label">
        store
      </label>
      <select
        id="store-select"
        value={store}
        onChange={(event) => {
          const next = event.target.value;
          if (next) void navigate({ to: `/s/${encodeURIComponent(next)}/${page === "drawers" ? "drawers" : page}` });
        }}
      >
        <option value="">{list.length ? "— choose —" : "no stores yet"}</option>
        {list.map((s) => (
          <option key={s.spec?.name} value={s.spec?.name}>
            {s.spec?.name}
          </option>
        ))}
      </select>
      {store && <ModeBadge mode={mode} />}
    </div>
  );
}

function SystemSignal() {
  const system = useSystem();
  if (system.isError) return <div className="signal bad" role="status">gateway unreachable</div>;
  const status = system.data;
  const embedder = status?.embedder;
  return (
    <div className="signal" role="status" aria-label="system status">
      {Object.entries(status?.tiers ?? {}).sort(([a], [b]) => a.localeCompare(b)).map(([tier, health]) => (
        <span key={tier} className={`dot ${health === "SERVING" ? "ok" : "bad"}`} title={`${tier}: ${health}`}>
          {tier}
        </span>
      ))}
      {embedder ? (
        <span className="embedder" title={embedder.model}>
          {embedder.device} · {shortModel(embedder.model ?? "")}
          {Number(embedder.vram_total_bytes ?? 0) > 0 &&
            ` · VRAM ${bytes(Number(embedder.vram_used_bytes))}/${bytes(Number(embedder.vram_total_bytes))}`}
        </span>
      ) : (
        status?.embedder_error && <span className="dot bad">embedder: {status.embedder_error}</span>
      )}
    </div>
  );
}

function shortModel(model: string): string {
  const parts = model.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? model;
}

function Wings({ store }: { store: string }) {
  const stats = useStats(store);
  const [open, setOpen] = useState<Record<string, boolean>>({});
  const wings = stats.data?.facets?.wings ?? [];
  if (!wings.length) return null;
  return (
    <nav aria-label="wings and rooms" className="wings">
      <div className="label">wings</div>
      <ul>
        {wings.map((wing) => (
          <li key={wing.wing}>
            <button
              type="button"
              className="linklike"
              aria-expanded={!!open[wing.wing ?? ""]}
              onClick={() => setOpen({ ...open, [wing.wing ?? ""]: !open[wing.wing ?? ""] })}
            >
              {open[wing.wing ?? ""] ? "▾" : "▸"} {wing.wing} <span className="count">{wing.count}</span>
            </button>
            {open[wing.wing ?? ""] && (
              <ul>
                {(wing.rooms ?? []).map((room) => (
                  <li key={room.room}>
                    <Link to="/s/$store/drawers" params={{ store }} search={{ wing: wing.wing, room: room.room }}>
                      {room.room} <span className="count">{room.count}</span>
                    </Link>
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function Chrome() {
  const who = useWhoAmI();
  const tier = useTier();
  const store = currentStore();
  const navigate = useNavigate();
  const queries = useQueryClient();

  useEffect(() => {
    const out = () => {
      setToken("");
      queries.clear();
      void navigate({ to: "/login" });
    };
    window.addEventListener("engram:unauthenticated", out);
    return () => window.removeEventListener("engram:unauthenticated", out);
  }, [navigate, queries]);

  return (
    <JobsProvider>
      <div className="app">
        <header className="topbar">
          <Link to="/" className="brand">
            ENGRAM
          </Link>
          <StoreSelector />
          <SystemSignal />
          <div className="who">
            <span className="tier-badge" data-tier={tier}>
              {tier}
            </span>
            <span className="muted">{who.data?.label || who.data?.id}</span>
            <button
              type="button"
              onClick={() => {
                setToken("");
                queries.clear();
                void navigate({ to: "/login" });
              }}
            >
              sign out
            </button>
          </div>
        </header>
        <aside className="rail">
          <nav aria-label="pages">
            <ul>
              {STORE_PAGES.filter((p) => allows(tier, p.needs)).map((p) => (
                <li key={p.to}>
                  {store ? (
                    <Link to={p.to} params={{ store }} activeProps={{ className: "active" }}>
                      {p.label}
                    </Link>
                  ) : (
                    <span className="muted" title="choose a store first">
                      {p.label}
                    </span>
                  )}
                </li>
              ))}
              <li>
                <Link to="/stores" activeProps={{ className: "active" }}>
                  stores
                </Link>
              </li>
              {allows(tier, "admin") && (
                <li>
                  <Link to="/tokens" activeProps={{ className: "active" }}>
                    tokens
                  </Link>
                </li>
              )}
            </ul>
          </nav>
          {store && <Wings store={store} />}
        </aside>
        <main className="content" id="main">
          <h1 className="sr-only">Engram operator dashboard</h1>
          <Outlet />
        </main>
        <JobsPanel />
      </div>
    </JobsProvider>
  );
}
