// Small shared pieces in the HUD vocabulary: framed cards, monospace labels, badges, chips.
import type { ReactNode } from "react";
import { ApiError } from "../api/client";

export function Card({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card" aria-label={title}>
      <header className="card-head">
        <h2>{title}</h2>
        {actions && <div className="card-actions">{actions}</div>}
      </header>
      <div className="card-body">{children}</div>
    </section>
  );
}

export function ModeBadge({ mode }: { mode?: string }) {
  const name = (mode ?? "").replace("DEPLOYMENT_MODE_", "") || "DEFAULT";
  return (
    <span className={`badge mode-${name.toLowerCase()}`} aria-label={`mode ${name}`}>
      {name === "UNSPECIFIED" ? "DEFAULT" : name}
    </span>
  );
}

/** What went wrong, as the gateway said it. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? `${error.status} ${error.code}: ${error.message}` : String(error);
  return (
    <p className="error" role="alert">
      {text}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      loading {what}…
    </p>
  );
}

export function ScoreChip({ score }: { score: number | undefined }) {
  const value = Number(score ?? 0);
  const level = value >= 0.6 ? "high" : value >= 0.3 ? "mid" : "low";
  return (
    <span className={`chip score-${level}`} title="final score">
      {value.toFixed(3)}
    </span>
  );
}

export function PinBadge({ pin }: { pin?: string }) {
  const name = (pin ?? "").replace("PIN_STATUS_", "").toLowerCase() || "active";
  return <span className={`badge pin-${name}`}>{name}</span>;
}

export function Pager({
  page,
  hasNext,
  onPage,
  total,
}: {
  page: number;
  hasNext: boolean;
  onPage: (page: number) => void;
  total?: number | string;
}) {
  return (
    <nav className="pager" aria-label="pages">
      <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        ← previous
      </button>
      <span className="muted">
        page {page + 1}
        {total !== undefined && ` · ${total} in all`}
      </span>
      <button type="button" disabled={!hasNext} onClick={() => onPage(page + 1)}>
        next →
      </button>
    </nav>
  );
}

export function bytes(n: number): string {
  if (!Number.isFinite(n) || n <= 0) return "0 B";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  const i = Math.min(units.length - 1, Math.floor(Math.log(n) / Math.log(1024)));
  return `${(n / 1024 ** i).toFixed(i ? 1 : 0)} ${units[i]}`;
}

export function when(stamp?: string | null): string {
  if (!stamp) return "—";
  const date = new Date(stamp);
  return Number.isNaN(date.getTime()) ? stamp : date.toISOString().replace("T", " ").slice(0, 19);
}

/** `content` with every occurrence of `phrase` marked (a drawer's signature). */
export function Highlighted({ content, phrase }: { content: string; phrase?: string | null }) {
  if (!phrase) return <>{content}</>;
  const parts = content.split(phrase);
  return (
    <>
      {parts.map((part, i) => (
        <span key={i}>
          {part}
          {i < parts.length - 1 && <mark className="signature">{phrase}</mark>}
        </span>
      ))}
    </>
  );
}
