// Drafts as an invoker proposed them (dry run, provider smoke test): what compose would write,
// never written. Shared by the prompt lab and the provider tab.
import type { S } from "../../api/client";
import { Highlighted } from "../../components/ui";

type Draft = S<"engram.v1.DrawerDraft">;

export function DraftList({ drafts, empty }: { drafts: Draft[]; empty: string }) {
  if (!drafts.length) return <p className="muted">{empty}</p>;
  return (
    <ol className="drafts">
      {drafts.map((draft, i) => (
        <li key={i}>
          <DraftItem draft={draft} />
        </li>
      ))}
    </ol>
  );
}

export function DraftItem({ draft }: { draft: Draft }) {
  const attributes = draft.attributes ?? {};
  return (
    <article className="hit" aria-label={`draft: ${draft.content.slice(0, 60)}`}>
      <div className="hit-head">
        <span className="badge">{draft.memory_type}</span>
        {attributes.write && <span className="badge">{attributes.write}</span>}
        <span className="count">
          {draft.wing} / {draft.room}
        </span>
        {draft.topic && <span className="count">topic {draft.topic}</span>}
        {draft.confidence !== undefined && <span className="count">confidence {Number(draft.confidence).toFixed(2)}</span>}
      </div>
      <p>
        <Highlighted content={draft.content} phrase={draft.signature} />
      </p>
      <dl className="meta">
        <dt>signature</dt>
        <dd>{draft.signature ? <code>{draft.signature}</code> : <span className="muted">none (ambient)</span>}</dd>
        <dt>speaker</dt>
        <dd>{attributes.speaker || <span className="muted">not named</span>}</dd>
        {!!draft.derived_from?.length && (
          <>
            <dt>from chunks</dt>
            <dd>
              {draft.derived_from.map((arc) => (
                <code key={`${arc.raw_chunk_id}-${arc.ordinal}`}>{arc.raw_chunk_id} </code>
              ))}
            </dd>
          </>
        )}
      </dl>
    </article>
  );
}

export function RejectedList({ rejected }: { rejected: S<"engram.v1.RejectedDraft">[] }) {
  if (!rejected.length) return <p className="muted">No draft was rejected.</p>;
  return (
    <ol className="drafts">
      {rejected.map((item, i) => (
        <li key={i}>
          <p className="error">rejected: {item.reason}</p>
          {item.drawer && <DraftItem draft={item.drawer} />}
        </li>
      ))}
    </ol>
  );
}
