// The raw sessions a drawer was derived from, each expandable to its chunks with the cited ones marked.
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { api, type S } from "../../api/client";
import { Card, ErrorNote, Loading, when } from "../../components/ui";

type Drawer = S<"engram.v1.Drawer">;

type Source = { session: string; chunks: Set<string>; ordinals: number[]; about?: S<"engram.v1.SessionDescriptor"> };

function sources(drawer: Drawer): Source[] {
  const bySession = new Map<string, Source>();
  for (const arc of drawer.derived_from ?? []) {
    const session = arc.session_id ?? "";
    const source = bySession.get(session) ?? { session, chunks: new Set<string>(), ordinals: [] };
    source.chunks.add(arc.raw_chunk_id ?? "");
    source.ordinals.push(arc.ordinal ?? 0);
    bySession.set(session, source);
  }
  for (const about of drawer.sessions ?? []) {
    const source = bySession.get(about.session_id ?? "");
    if (source) source.about = about;
  }
  return [...bySession.values()];
}

export function DerivedFrom({ store, drawer }: { store: string; drawer: Drawer }) {
  const list = sources(drawer);
  return (
    <Card title="derived from raw sessions">
      {list.length === 0 && <p className="muted">not derived from a raw session (written directly)</p>}
      {list.map((source) => (
        <SourceSession key={source.session} store={store} source={source} />
      ))}
    </Card>
  );
}

function SourceSession({ store, source }: { store: string; source: Source }) {
  const [open, setOpen] = useState(false);
  const chunks = useQuery({
    queryKey: ["raw", store, "session", source.session, "chunks"],
    queryFn: () =>
      api("get", "/v1/stores/{store}/raw/sessions/{session_id}/chunks", { path: { store, session_id: source.session } }),
    enabled: open && source.session !== "",
    staleTime: 60_000,
  });
  const about = source.about;
  return (
    <article className="hit" aria-label={`session ${source.session}`}>
      <div className="hit-head">
        <code>{source.session || "(no session id)"}</code>
        {about?.origin_kind && <span className="badge">{about.origin_kind}</span>}
        {about && (
          <span className="count">
            {about.raw_chunk_count ?? 0} chunks · {when(about.span_start)} → {when(about.span_end)}
          </span>
        )}
        <span className="count">cites chunk{source.ordinals.length === 1 ? "" : "s"} #{[...source.ordinals].sort((a, b) => a - b).join(", #")}</span>
        <button type="button" aria-expanded={open} disabled={!source.session} onClick={() => setOpen(!open)}>
          {open ? "collapse" : "expand"}
        </button>
        {source.session && (
          <Link to="/s/$store/drawers" params={{ store }} search={{ session: source.session }}>
            drawers from this session
          </Link>
        )}
      </div>
      {open && (
        <>
          {chunks.isLoading && <Loading what="the session's chunks" />}
          <ErrorNote error={chunks.error} />
          {chunks.data && (
            <ol className="chunks" aria-label={`chunks of ${source.session}`}>
              {(chunks.data.chunks ?? []).map((chunk) => {
                const cited = source.chunks.has(chunk.id ?? "");
                return (
                  <li key={chunk.id} className={cited ? "cited" : undefined} value={(chunk.ordinal ?? 0) + 1}>
                    <div className="count">
                      #{chunk.ordinal ?? 0} · {chunk.speaker || chunk.role || "—"} · {when(chunk.occurred_at || chunk.created_at)}
                      {cited && (
                        <>
                          {" "}
                          <span className="badge">cited by this drawer</span>
                        </>
                      )}
                    </div>
                    <div className="chunk-text">{chunk.content}</div>
                  </li>
                );
              })}
            </ol>
          )}
        </>
      )}
    </article>
  );
}
