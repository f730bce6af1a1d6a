// Small shared pieces in the HUD vocabulary: framed cards, monospace labels, badges, chips.
import type { ReactNode } from "react";
import { useEffect, useId, useRef, useState } from "react";
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
    <nav className="pager" aria-label="pagination">
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

/**
 * A modal confirmation (native <dialog>: focus stays inside, Escape cancels). With `typeToConfirm`
 * the confirm button waits until that exact text is typed (deleting a store asks for its name).
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  typeToConfirm,
  busy,
  error,
  onConfirm,
  onCancel,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  typeToConfirm?: string;
  busy?: boolean;
  error?: unknown;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  const [typed, setTyped] = useState("");
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const ready = !typeToConfirm || typed === typeToConfirm;
  return (
    <dialog
      ref={ref}
      className="confirm"
      aria-labelledby={`${id}-title`}
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
    >
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          if (ready && !busy) onConfirm();
        }}
      >
        <h2 id={`${id}-title`}>{title}</h2>
        <div>{children}</div>
        {typeToConfirm !== undefined && (
          <>
            <label className="label" htmlFor={`${id}-typed`}>
              type {typeToConfirm} to confirm
            </label>
            <input id={`${id}-typed`} autoComplete="off" value={typed} onChange={(e) => setTyped(e.target.value)} autoFocus />
          </>
        )}
        <ErrorNote error={error} />
        <div className="row">
          <button type="button" onClick={onCancel} autoFocus={typeToConfirm === undefined}>
            cancel
          </button>
          <button type="submit" className="danger" disabled={!ready || busy}>
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
