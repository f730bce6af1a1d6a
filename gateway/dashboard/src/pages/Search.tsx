// The marquee: one question against a store, ranked as agents see it, with every factor of
// every candidate and the query-level dampening profile ("is scoring working by accident?").
import { useQuery } from "@tanstack/react-query";
import { Link, useNavigate, useParams, useSearch } from "@tanstack/react-router";
import { useState } from "react";
import { api, type S } from "../api/client";
import { useStats } from "../api/hooks";
import { Card, ErrorNote, Highlighted, Loading, PinBadge, ScoreChip } from "../components/ui";

type Ranker = S<"engram.v1.RankerMode">;
const RANKERS: { value: Ranker; label: string }[] = [
  { value: "RANKER_MODE_FULL", label: "full" },
  { value: "RANKER_MODE_HYBRID", label: "hybrid" },
  { value: "RANKER_MODE_COSINE", label: "cosine" },
];

export type SearchParams = {
  q?: string;
  wing?: string;
  room?: string;
  intent?: string;
  n?: number;
  min?: number;
  ranker?: Ranker;
  compare?: boolean;
  types?: string[];
};

export function readSearchParams(search: Record<string, unknown>): SearchParams {
  const text = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  const num = (v: unknown) => (v === undefined || v === "" || Number.isNaN(Number(v)) ? undefined : Number(v));
  const ranker = RANKERS.find((r) => r.value === search.ranker)?.value;
  const types = Array.isArray(search.types) ? search.types.filter((t): t is string => typeof t === "string") : undefined;
  return {
    q: text(search.q),
    wing: text(search.wing),
    room: text(search.room),
    intent: text(search.intent),
    n: num(search.n),
    min: num(search.min),
    ranker,
    compare: search.compare === true || search.compare === "true" ? true : undefined,
    types: types?.length ? types : undefined,
  };
}

function request(params: SearchParams, ranker: Ranker): S<"engram.v1.SearchRequest"> {
  return {
    query: params.q ?? "",
    intent: params.intent ?? "",
    wing: params.wing ?? "",
    room: params.room ?? "",
    memory_types: params.types ?? [],
    include_breakdown: true,
    ranker,
    ...(params.n !== undefined ? { n_results: params.n } : {}),
    ...(params.min !== undefined ? { min_score: params.min } : {}),
  };
}

function useRun(store: string, params: SearchParams, ranker: Ranker, enabled: boolean) {
  return useQuery({
    queryKey: ["search", store, params, ranker],
    queryFn: () => api("post", "/v1/stores/{store}/search", { path: { store }, body: request(params, ranker) }),
    enabled: enabled && !!params.q,
    staleTime: 30_000,
  });
}

export function SearchPage() {
  const { store } = useParams({ from: "/shell/s/$store/search" });
  const params = useSearch({ from: "/shell/s/$store/search" });
  const navigate = useNavigate({ from: "/s/$store/search" });
  const storeInfo = useQuery({
    queryKey: ["store", store],
    queryFn: () => api("get", "/v1/stores/{store}", { path: { store } }),
  });
  const stats = useStats(store);
  const [draft, setDraft] = useState<SearchParams>(params);
  const ranker = params.ranker ?? "RANKER_MODE_FULL";
  const main = useRun(store, params, ranker, true);
  const others = RANKERS.filter((r) => r.value !== ranker);
  const sideA = useRun(store, params, others[0].value, !!params.compare);
  const sideB = useRun(store, params, others[1].value, !!params.compare);
  const intents = storeInfo.data?.search_defaults?.intents ?? [];
  const wings = stats.data?.facets?.wings ?? [];
  const rooms = wings.find((w) => w.wing === draft.wing)?.rooms ?? wings.flatMap((w) => w.rooms ?? []);

  const go = (next: SearchParams) => void navigate({ search: next });

  return (
    <div>
      <Card title={`search · ${store}`}>
        <form
          className="row"
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            go(draft);
          }}
        >
          <div style={{ flex: "1 1 320px" }}>
            <label className="label" htmlFor="q">
              query
            </label>
            <input
              id="q"
              type="search"
              value={draft.q ?? ""}
              onChange={(e) => setDraft({ ...draft, q: e.target.value })}
              placeholder="what does the API return for a missing drawer?"
            />
          </div>
          <div>
            <label className="label" htmlFor="wing">
              wing
            </label>
            <select id="wing" value={draft.wing ?? ""} onChange={(e) => setDraft({ ...draft, wing: e.target.value || undefined, room: undefined })}>
              <option value="">all</option>
              {wings.map((w) => (
                <option key={w.wing} value={w.wing}>
                  {w.wing}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label className="label" htmlFor="room">
              room
            </label>
            <select id="room" value={draft.room ?? ""} onChange={(e) => setDraft({ ...draft, room: e.target.value || undefined })}>
              <option value="">all</option>
              {rooms.map((r) => (
                <option key={r.room} value={r.room}>
                  {r.room}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label className="label" htmlFor="intent">
              intent
            </label>
            <select id="intent" value={draft.intent ?? ""} onChange={(e) => setDraft({ ...draft, intent: e.target.value || undefined })}>
              <option value="">inferred</option>
              {intents.map((i) => (
                <option key={i} value={i}>
                  {i}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label className="label" htmlFor="n">
              n_results
            </label>
            <input
              id="n"
              type="number"
              min={1}
              max={100}
              style={{ width: "6em", minWidth: 0 }}
              value={draft.n ?? ""}
              placeholder={String(storeInfo.data?.search_defaults?.n_results ?? "")}
              onChange={(e) => setDraft({ ...draft, n: e.target.value === "" ? undefined : Number(e.target.value) })}
            />
          </div>
          <div>
            <label className="label" htmlFor="min">
              min_score
            </label>
            <input
              id="min"
              type="number"
              step={0.05}
              min={-1}
              max={10}
              style={{ width: "7em", minWidth: 0 }}
              value={draft.min ?? ""}
              placeholder={String(storeInfo.data?.search_defaults?.min_score ?? "")}
              onChange={(e) => setDraft({ ...draft, min: e.target.value === "" ? undefined : Number(e.target.value) })}
            />
          </div>
          <div>
            <label className="label" htmlFor="ranker">
              ranker
            </label>
            <select id="ranker" value={draft.ranker ?? "RANKER_MODE_FULL"} onChange={(e) => setDraft({ ...draft, ranker: e.target.value as Ranker })}>
              {RANKERS.map((r) => (
                <option key={r.value} value={r.value}>
                  {r.label}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label className="label" htmlFor="compare">
              side by side
            </label>
            <input
              id="compare"
              type="checkbox"
              checked={!!draft.compare}
              onChange={(e) => setDraft({ ...draft, compare: e.target.checked || undefined })}
            />
          </div>
          <div>
            <button type="submit" className="primary" disabled={!draft.q?.trim()}>
              search
            </button>
          </div>
        </form>
      </Card>
      {!params.q && <p className="muted">Ask a question to see how the store ranks its drawers for it.</p>}
      {params.q && (
        <>
          {main.isLoading && <Loading what="results" />}
          <ErrorNote error={main.error} />
          {main.data && (
            <div className="grid-2">
              <div>
                <QueryProfile answer={main.data} />
                <Results store={store} answer={main.data} title={`results · ${label(ranker)}`} />
              </div>
              <Facets
                answer={main.data}
                selected={params.types ?? []}
                onType={(type) => {
                  const types = new Set(params.types ?? []);
                  if (types.has(type)) types.delete(type);
                  else types.add(type);
                  const next = { ...params, types: types.size ? [...types] : undefined };
                  setDraft(next);
                  go(next);
                }}
                onRoom={(room) => {
                  const next = { ...params, room };
                  setDraft(next);
                  go(next);
                }}
              />
            </div>
          )}
          {params.compare && (
            <div className="grid-cols" aria-label="rankers side by side">
              {[
                { run: main, ranker },
                { run: sideA, ranker: others[0].value },
                { run: sideB, ranker: others[1].value },
              ].map(({ run, ranker: r }) => (
                <Card key={r} title={`ranker · ${label(r)}`}>
                  <ErrorNote error={run.error} />
                  <ol>
                    {(run.data?.results ?? []).map((hit) => (
                      <li key={hit.drawer?.id}>
                        <ScoreChip score={hit.score} /> <span className="badge">{hit.drawer?.memory_type}</span>{" "}
                        {(hit.drawer?.content ?? "").slice(0, 110)}
                      </li>
                    ))}
                  </ol>
                  {run.data && !run.data.results?.length && <p className="muted">nothing above the floor</p>}
                </Card>
              ))}
            </div>
          )}
        </>
      )}
    </div>
  );
}

function label(ranker: Ranker): string {
  return RANKERS.find((r) => r.value === ranker)?.label ?? ranker;
}

function QueryProfile({ answer }: { answer: S<"engram.v1.SearchResponse"> }) {
  const signals = answer.dampening?.signals ?? [];
  return (
    <Card title="query profile">
      {answer.notice && <p className="notice">{answer.notice}</p>}
      <p>
        <span className="label">intent</span>
        <strong>{answer.intent}</strong>{" "}
        {answer.intent_inferred ? (
          <span className="muted">
            inferred · confidence {Number(answer.intent_confidence ?? 0).toFixed(2)}
          </span>
        ) : (
          <span className="muted">given</span>
        )}
      </p>
      {!!answer.intent_mixture?.length && (
        <p className="muted">
          scored as a mixture:{" "}
          {answer.intent_mixture.map((share) => `${share.intent} ${(Number(share.weight) * 100).toFixed(0)}%`).join(" · ")}
        </p>
      )}
      {!!answer.intent_reasons?.length && (
        <ul className="muted">
          {answer.intent_reasons.map((reason) => (
            <li key={reason}>{reason}</li>
          ))}
        </ul>
      )}
      <h3>dampening · {answer.dampening?.candidate_count ?? 0} candidates</h3>
      <table aria-label="dampening profile">
        <thead>
          <tr>
            <th>signal</th>
            <th className="num">distinct</th>
            <th className="num">entropy</th>
            <th className="num">h_max</th>
            <th className="num">damp</th>
            <th>verdict</th>
          </tr>
        </thead>
        <tbody>
          {signals.map((signal) => (
            <tr key={signal.signal}>
              <td>{signal.signal}</td>
              <td className="num">{signal.distinct_values ?? 0}</td>
              <td className="num">{Number(signal.entropy ?? 0).toFixed(3)}</td>
              <td className="num">{Number(signal.h_max ?? 0).toFixed(3)}</td>
              <td className="num">
                <span className="bar" style={{ width: `${Math.round(Number(signal.damp ?? 0) * 60)}px` }} />{" "}
                {Number(signal.damp ?? 0).toFixed(2)}
              </td>
              <td>{verdict(signal)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted">
        {answer.candidates_considered ?? 0} candidates considered · {answer.topically_lifted ?? 0} lifted by a
        topical neighbour · {answer.outside_relevance_window ?? 0} held behind the relevance window ·{" "}
        {Number(answer.timings?.total_ms ?? 0).toFixed(1)} ms (embed{" "}
        {Number(answer.timings?.embed_ms ?? 0).toFixed(1)}, candidates {Number(answer.timings?.candidates_ms ?? 0).toFixed(1)},
        scoring {Number(answer.timings?.scoring_ms ?? 0).toFixed(1)})
      </p>
    </Card>
  );
}

function verdict(signal: S<"engram.v1.SignalDampening">): string {
  if (!signal.enabled) return "off: switched off for this store";
  if (signal.fired) return "fired: the candidates differ, so it tilts the ranking";
  if ((signal.distinct_values ?? 0) <= 1) return "collapsed: every candidate has the same value";
  return "collapsed: no spread to rank by";
}

function Results({ store, answer, title }: { store: string; answer: S<"engram.v1.SearchResponse">; title: string }) {
  const results = answer.results ?? [];
  return (
    <Card title={title}>
      {results.length === 0 && (
        <p className="muted">Nothing relevant enough: the store stays silent rather than guess.</p>
      )}
      {results.map((hit) => (
        <Hit key={hit.drawer?.id} store={store} hit={hit} />
      ))}
    </Card>
  );
}

function Hit({ store, hit }: { store: string; hit: S<"engram.v1.SearchHit"> }) {
  const [open, setOpen] = useState(false);
  const drawer = hit.drawer ?? {};
  return (
    <article className="hit" aria-label={`result ${hit.rank}`}>
      <div className="hit-head">
        <span className="count">#{hit.rank}</span>
        <ScoreChip score={hit.score} />
        <span className="badge">{drawer.memory_type}</span>
        <PinBadge pin={drawer.pin_status} />
        {hit.deprecated && <span className="badge pin-deprecated">deprecated</span>}
        <span className="count">
          {drawer.wing} / {drawer.room}
        </span>
        <Link to="/s/$store/drawers/$id" params={{ store, id: drawer.id ?? "" }}>
          open
        </Link>
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "hide breakdown" : "breakdown"}
        </button>
      </div>
      <p>
        <Highlighted content={drawer.content ?? ""} phrase={drawer.signature} />
      </p>
      {!!hit.supersedes?.length && <p className="muted">supersedes {hit.supersedes.join(", ")}</p>}
      {!!hit.superseded_by?.length && <p className="notice">superseded by {hit.superseded_by.join(", ")}</p>}
      {open && hit.breakdown && <Breakdown breakdown={hit.breakdown} />}
    </article>
  );
}

const ROWS: { name: string; raw?: keyof S<"engram.v1.ScoreBreakdown">; used: keyof S<"engram.v1.ScoreBreakdown">; note: string }[] = [
  { name: "similarity", used: "similarity", note: "cosine to the query" },
  { name: "keyword evidence", used: "keyword_evidence", note: "BM25 over the query's keyword hits, 0..1" },
  { name: "relevance", used: "relevance", note: "similarity + 0.4 × keyword evidence" },
  { name: "salience", raw: "salience", used: "salience_factor", note: "effective salience ^ w_sal" },
  { name: "evidence", used: "evidence", note: "relevance × salience factor" },
  { name: "shared evidence", used: "shared_evidence", note: "own, or a topical neighbour's" },
  { name: "authority", raw: "authority_raw", used: "authority_factor", note: "after exponent and dampening" },
  { name: "confidence", raw: "confidence_raw", used: "confidence_factor", note: "after exponent and dampening" },
  { name: "type × intent", raw: "type_multiplier_raw", used: "type_factor", note: "matrix cell, dampened" },
  { name: "diary", used: "diary_factor", note: "diary entries weigh less" },
  { name: "pin", used: "pin_factor", note: "pinned 1.3; deprecated outside history 0.2" },
  { name: "provenance", used: "provenance", note: "authority × confidence × type × diary × pin" },
  { name: "score", used: "score", note: "shared evidence × provenance" },
  { name: "keyword boost", used: "keyword_boost", note: "added after the product" },
  { name: "final", used: "final_score", note: "what the ranking sorts by" },
];

function Breakdown({ breakdown }: { breakdown: S<"engram.v1.ScoreBreakdown"> }) {
  const value = (key?: keyof S<"engram.v1.ScoreBreakdown">) =>
    key === undefined ? "" : typeof breakdown[key] === "number" ? (breakdown[key] as number).toFixed(4) : String(breakdown[key] ?? "");
  return (
    <table className="breakdown" aria-label="score breakdown">
      <thead>
        <tr>
          <th>factor</th>
          <th className="num">raw</th>
          <th className="num">used (dampened)</th>
          <th>meaning</th>
        </tr>
      </thead>
      <tbody>
        {ROWS.map((row) => (
          <tr key={row.name}>
            <td>{row.name}</td>
            <td className="num">{value(row.raw)}</td>
            <td className="num">{value(row.used)}</td>
            <td className="muted">{row.note}</td>
          </tr>
        ))}
        <tr>
          <td>hits</td>
          <td colSpan={3} className="muted">
            {breakdown.vector_hit ? "vector" : ""} {breakdown.keyword_hit ? "keyword" : ""}
            {breakdown.lifted_by ? ` · lifted by ${breakdown.lifted_by}` : ""}
          </td>
        </tr>
      </tbody>
    </table>
  );
}

function Facets({
  answer,
  selected,
  onType,
  onRoom,
}: {
  answer: S<"engram.v1.SearchResponse">;
  selected: string[];
  onType: (type: string) => void;
  onRoom: (room: string) => void;
}) {
  const count = (key: (d: S<"engram.v1.Drawer">) => string | undefined) => {
    const counts = new Map<string, number>();
    for (const hit of answer.results ?? []) {
      const value = key(hit.drawer ?? {}) ?? "";
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return [...counts.entries()].sort((a, b) => b[1] - a[1]);
  };
  return (
    <aside aria-label="facets">
      <Card title="facets">
        <span className="label">memory type</span>
        <ul className="store-list">
          {count((d) => d.memory_type).map(([type, n]) => (
            <li key={type}>
              <label>
                <input type="checkbox" checked={selected.includes(type)} onChange={() => onType(type)} /> {type}{" "}
                <span className="count">{n}</span>
              </label>
            </li>
          ))}
          {selected
            .filter((type) => !(answer.results ?? []).some((h) => h.drawer?.memory_type === type))
            .map((type) => (
              <li key={type}>
                <label>
                  <input type="checkbox" checked onChange={() => onType(type)} /> {type} <span className="count">0</span>
                </label>
              </li>
            ))}
        </ul>
        <span className="label">room</span>
        <ul className="store-list">
          {count((d) => d.room).map(([room, n]) => (
            <li key={room}>
              <button type="button" className="linklike" onClick={() => onRoom(room)}>
                {room} <span className="count">{n}</span>
              </button>
            </li>
          ))}
        </ul>
        <span className="label">pin status</span>
        <ul className="store-list">
          {count((d) => d.pin_status).map(([pin, n]) => (
            <li key={pin}>
              <PinBadge pin={pin} /> <span className="count">{n}</span>
            </li>
          ))}
        </ul>
      </Card>
    </aside>
  );
}
