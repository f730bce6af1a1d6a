// A store's raw memories: the verbatim chunks drawers are composed from. Browse them session by
// session (how many drawers derive from each), or search them by similarity (optionally hybrid
// with keyword hits) and open a hit's neighbours to read it in context.
import { useQuery } from "@tanstack/react-query";
import { useParams } from "@tanstack/react-router";
import { useId, useState } from "react";
import { api, type S } from "../api/client";
import { Card, ErrorNote, Loading, Pager, ScoreChip, when } from "../components/ui";

type RawChunk = S<"engram.v1.RawChunk">;
type RawHit = S<"engram.v1.RawHit">;
type Session = S<"engram.v1.RawSessionSummary">;

const SESSIONS_PAGE = 20;

export function RawPage() {
  const { store } = useParams({ from: "/shell/s/$store/raw" });
  const [mode, setMode] = useState<"browse" | "search">("browse");
  return (
    <div>
      <h1 className="page-title">raw memories · {store}</h1>
      <div className="row mode-toggle" role="group" aria-label="browse or search raw memories">
        <button type="button" aria-pressed={mode === "browse"} className={mode === "browse" ? "primary" : ""} onClick={() => setMode("browse")}>
          browse sessions
        </button>
        <button type="button" aria-pressed={mode === "search"} className={mode === "search" ? "primary" : ""} onClick={() => setMode("search")}>
          search chunks
        </button>
      </div>
      {mode === "browse" ? <Browse store={store} /> : <Search store={store} />}
    </div>
  );
}

// ---------------------------------------------------------------- browse

function Browse({ store }: { store: string }) {
  const [origin, setOrigin] = useState("");
  const [draft, setDraft] = useState("");
  const [tokens, setTokens] = useState<string[]>([""]);
  const [page, setPage] = useState(0);
  const sessions = useQuery({
    queryKey: ["sessions", store, origin, tokens[page]],
    queryFn: () =>
      api("get", "/v1/stores/{store}/raw/sessions", {
        path: { store },
        query: { origin_kind: origin || undefined, page_size: SESSIONS_PAGE, page_token: tokens[page] || undefined },
      }),
  });
  const list = sessions.data?.sessions ?? [];
  const next = sessions.data?.page?.next_page_token ?? "";
  return (
    <Card title="sessions">
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          setOrigin(draft.trim());
          setTokens([""]);
          setPage(0);
        }}
      >
        <div>
          <label className="label" htmlFor="raw-origin">
            origin kind
          </label>
          <input id="raw-origin" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="markdown, dialog, …" />
        </div>
        <div>
          <button type="submit">filter</button>
        </div>
      </form>
      {sessions.isLoading && <Loading what="sessions" />}
      <ErrorNote error={sessions.error} />
      {sessions.data && list.length === 0 && (
        <p className="muted">{origin ? `No ${origin} sessions.` : "No raw memories yet: ingest files on the corpus page."}</p>
      )}
      {list.length > 0 && (
        <table aria-label="raw sessions">
          <thead>
            <tr>
              <th>session</th>
              <th>origin</th>
              <th className="num">chunks</th>
              <th>when</th>
              <th className="num">drawers</th>
              <th>read</th>
            </tr>
          </thead>
          <tbody>
            {list.map((session) => (
              <SessionRow key={session.descriptor?.session_id} store={store} session={session} />
            ))}
          </tbody>
        </table>
      )}
      <Pager
        page={page}
        hasNext={!!next}
        total={sessions.data?.page?.total}
        onPage={(to) => {
          if (to > page && next) setTokens([...tokens.slice(0, page + 1), next]);
          setPage(to);
        }}
      />
    </Card>
  );
}

function span(session: Session): string {
  const start = session.descriptor?.span_start;
  const end = session.descriptor?.span_end;
  if (!start && !end) return "—";
  if (!end || end === start) return when(start ?? end);
  return `${when(start)} → ${when(end)}`;
}

function SessionRow({ store, session }: { store: string; session: Session }) {
  const [open, setOpen] = useState(false);
  const d = session.descriptor ?? {};
  const id = d.session_id ?? "";
  return (
    <>
      <tr>
        <td>
          <code>{id}</code>
          {session.file_id && id !== `file-${session.file_id}` && <div className="count">file {session.file_id}</div>}
        </td>
        <td>
          <span className="badge">{d.origin_kind || "—"}</span>
        </td>
        <td className="num">{d.raw_chunk_count ?? 0}</td>
        <td className="count">{span(session)}</td>
        <td className="num">
          <DerivedDrawers store={store} session={session} />
        </td>
        <td>
          <button type="button" aria-expanded={open} aria-label={`${open ? "hide" : "show"} chunks of ${id}`} onClick={() => setOpen(!open)}>
            {open ? "hide" : "show"}
          </button>
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={6}>
            <SessionChunks store={store} session={id} />
          </td>
        </tr>
      )}
    </>
  );
}

/** Drawers composed from the session. The listing counts them per file (one session per file);
 * a session that came in without a file (added by an agent) is counted by asking the drawers. */
function DerivedDrawers({ store, session }: { store: string; session: Session }) {
  const id = session.descriptor?.session_id ?? "";
  const counted = useQuery({
    queryKey: ["drawers", store, "derived-from-session", id],
    queryFn: () =>
      api("get", "/v1/stores/{store}/drawers", { path: { store }, query: { derived_from_session: id, page_size: 1 } }),
    enabled: !session.file_id && !!id,
    staleTime: 30_000,
  });
  if (session.file_id) return <>{session.derived_drawer_count ?? 0}</>;
  if (counted.isLoading) return <span className="muted">…</span>;
  if (counted.error) return <span className="muted" title={String(counted.error)}>?</span>;
  return <>{String(counted.data?.page?.total ?? 0)}</>;
}

function SessionChunks({ store, session }: { store: string; session: string }) {
  const chunks = useQuery({
    queryKey: ["sessions", store, "chunks", session],
    queryFn: () =>
      api("get", "/v1/stores/{store}/raw/sessions/{session_id}/chunks", { path: { store, session_id: session } }),
  });
  if (chunks.isLoading) return <Loading what="chunks" />;
  if (chunks.error) return <ErrorNote error={chunks.error} />;
  const list = chunks.data?.chunks ?? [];
  if (!list.length) return <p className="muted">This session has no chunks.</p>;
  return (
    <ol className="chunks" aria-label={`chunks of ${session}`}>
      {list.map((chunk) => (
        <li key={chunk.id}>
          <Chunk chunk={chunk} />
        </li>
      ))}
    </ol>
  );
}

/** One raw chunk: where it sits (ordinal, headings, lines, speaker) and its verbatim text. */
function Chunk({ chunk, focus }: { chunk: RawChunk; focus?: boolean }) {
  const where: string[] = [`#${chunk.ordinal ?? 0}`];
  if (chunk.heading_path?.length) where.push(chunk.heading_path.join(" › "));
  if (chunk.line_start) where.push(`lines ${chunk.line_start}–${chunk.line_end ?? chunk.line_start}`);
  if (chunk.page) where.push(`page ${chunk.page}`);
  if (chunk.speaker || chunk.role) where.push([chunk.speaker, chunk.role].filter(Boolean).join(" · "));
  const stamp = chunk.occurred_at ?? chunk.created_at;
  return (
    <div className={`chunk${focus ? " focus" : ""}`}>
      <div className="count">
        {focus && <strong>▶ this hit · </strong>}
        {where.join(" · ")} · {when(stamp)} · <span title="chunk id">{chunk.id}</span>
      </div>
      <pre>{chunk.content}</pre>
    </div>
  );
}

// ---------------------------------------------------------------- search

type Asked = { query: string; hybrid: boolean; n: number; origin: string };

function Search({ store }: { store: string }) {
  const [draft, setDraft] = useState<Asked>({ query: "", hybrid: false, n: 10, origin: "" });
  const [asked, setAsked] = useState<Asked | null>(null);
  const results = useQuery({
    queryKey: ["raw-search", store, asked],
    queryFn: () =>
      api("post", "/v1/stores/{store}/raw/search", {
        path: { store },
        body: { query: asked?.query ?? "", hybrid: asked?.hybrid ?? false, n_results: asked?.n, origin_kind: asked?.origin ?? "" },
      }),
    enabled: !!asked?.query,
  });
  const hits = results.data?.results ?? [];
  return (
    <>
      <Card title="search raw chunks">
        <form
          className="row"
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            if (draft.query.trim()) setAsked({ ...draft, query: draft.query.trim() });
          }}
        >
          <div style={{ flex: "1 1 320px" }}>
            <label className="label" htmlFor="raw-query">
              query
            </label>
            <input id="raw-query" type="search" value={draft.query} onChange={(e) => setDraft({ ...draft, query: e.target.value })} />
          </div>
          <div>
            <label className="label" htmlFor="raw-n">
              n_results
            </label>
            <input
              id="raw-n"
              type="number"
              min={1}
              max={100}
              style={{ width: "6em", minWidth: 0 }}
              value={draft.n}
              onChange={(e) => setDraft({ ...draft, n: Math.max(1, Number(e.target.value) || 1) })}
            />
          </div>
          <div>
            <label className="label" htmlFor="raw-search-origin">
              origin kind
            </label>
            <input id="raw-search-origin" value={draft.origin} onChange={(e) => setDraft({ ...draft, origin: e.target.value.trim() })} />
          </div>
          <div>
            <label className="label" htmlFor="raw-hybrid">
              hybrid (add keyword hits)
            </label>
            <input id="raw-hybrid" type="checkbox" checked={draft.hybrid} onChange={(e) => setDraft({ ...draft, hybrid: e.target.checked })} />
          </div>
          <div>
            <button type="submit" className="primary" disabled={!draft.query.trim()}>
              search
            </button>
          </div>
        </form>
        <p className="muted">
          {draft.hybrid
            ? "Hybrid: similarity hits plus keyword (full-text) hits; the score adds a keyword bonus."
            : "Similarity only: chunks ranked by cosine to the query."}
        </p>
      </Card>
      {asked && (
        <Card title={`results · ${asked.hybrid ? "hybrid" : "similarity"}`}>
          {results.isLoading && <Loading what="results" />}
          <ErrorNote error={results.error} />
          {results.data?.notice && <p className="notice">{results.data.notice}</p>}
          {results.data && hits.length === 0 && <p className="muted">No raw chunk matches.</p>}
          {hits.map((hit, i) => (
            <RawResult key={hit.chunk?.id ?? i} store={store} hit={hit} rank={i + 1} />
          ))}
        </Card>
      )}
    </>
  );
}

function RawResult({ store, hit, rank }: { store: string; hit: RawHit; rank: number }) {
  const [open, setOpen] = useState(false);
  const [around, setAround] = useState(2);
  const id = useId();
  const chunk = hit.chunk ?? {};
  return (
    <article className="hit" aria-label={`raw result ${rank}`}>
      <div className="hit-head">
        <span className="count">#{rank}</span>
        <ScoreChip score={hit.score} />
        <span className="count">similarity {Number(hit.similarity ?? 0).toFixed(3)}</span>
        {hit.keyword_hit && <span className="badge">keyword hit</span>}
        <span className="badge">{chunk.origin_kind}</span>
        <span className="count">
          {chunk.session_id} · #{chunk.ordinal ?? 0}
        </span>
        <button type="button" aria-expanded={open} aria-label={`${open ? "collapse" : "expand"} result ${rank}`} onClick={() => setOpen(!open)}>
          {open ? "collapse" : "expand"}
        </button>
        {open && (
          <>
            <label htmlFor={`${id}-around`} className="count">
              neighbours each side
            </label>
            <select id={`${id}-around`} value={around} onChange={(e) => setAround(Number(e.target.value))}>
              {[1, 2, 3, 5, 10].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </>
        )}
      </div>
      {open ? <Expanded store={store} chunk={chunk} around={around} /> : <pre>{chunk.content}</pre>}
    </article>
  );
}

function Expanded({ store, chunk, around }: { store: string; chunk: RawChunk; around: number }) {
  const expand = useQuery({
    queryKey: ["raw-expand", store, chunk.id, around],
    queryFn: () =>
      api("post", "/v1/stores/{store}/raw/expand", {
        path: { store },
        body: { chunk_id: chunk.id ?? "", before: around, after: around },
      }),
  });
  if (expand.isLoading) return <Loading what="neighbours" />;
  if (expand.error) return <ErrorNote error={expand.error} />;
  const data = expand.data;
  if (!data) return null;
  return (
    <ol className="chunks" aria-label={`chunk ${chunk.id} in context`}>
      {(data.before ?? []).map((c) => (
        <li key={c.id}>
          <Chunk chunk={c} />
        </li>
      ))}
      <li>
        <Chunk chunk={data.chunk ?? chunk} focus />
      </li>
      {(data.after ?? []).map((c) => (
        <li key={c.id}>
          <Chunk chunk={c} />
        </li>
      ))}
      {!data.before?.length && !data.after?.length && <li className="muted">no neighbours: the chunk stands alone</li>}
    </ol>
  );
}
