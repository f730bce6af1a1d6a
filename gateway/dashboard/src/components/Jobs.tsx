// Long work the dashboard started (ingest, compose, …) followed live: every watched job streams
// its progress from GET /v1/jobs/{id}/events (SSE, read with fetch so the bearer token goes
// along), falls back to polling GET /v1/jobs/{id} when the stream fails, and, once the job is
// over, refreshes what it changed. The panel at the bottom right lists them until closed.
import { useQueryClient } from "@tanstack/react-query";
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { api, getToken, type S } from "../api/client";
import { allows, useTier } from "../api/hooks";
import { ErrorNote, when } from "./ui";

type Job = S<"engram.v1.Job">;

const TERMINAL = new Set(["JOB_STATE_DONE", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"]);
const POLL_MS = 2_000;
const POLL_GIVE_UP = 5; // consecutive failed polls before the panel says so and stops asking
/** Queries a finished job may have made stale, by the first element of their key. */
const CHANGED_BY_JOBS = ["files", "tree", "stats", "drawers", "sessions"];

function isTerminal(state: string | undefined): boolean {
  return TERMINAL.has(state ?? "");
}

type Watched = { job: Job; trouble?: unknown };

type JobsContextValue = {
  watch(job: Job): void;
  jobs: Watched[];
  update(job: Job): void;
  close(id: string): void;
};

const JobsContext = createContext<JobsContextValue | null>(null);

/** For pages that start jobs: `watch(job)` shows the job in the panel and follows it. */
export function useJobs(): { watch(job: Job): void } {
  const context = useContext(JobsContext);
  if (!context) throw new Error("useJobs needs a JobsProvider around it");
  return { watch: context.watch };
}

// ---------------------------------------------------------------- the event stream

type SseEvent = { event: string; data: string; id: string };

/** Server-Sent Events as the spec frames them: lines (CRLF, LF or CR), blank line = dispatch. */
class SseParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];
  private id = "";

  push(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const end = this.buffer.search(/[\r\n]/);
      if (end < 0) break;
      // a CR at the very end may be the first half of CRLF: wait for the next piece
      if (this.buffer[end] === "\r" && end === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, end);
      const skip = this.buffer[end] === "\r" && this.buffer[end + 1] === "\n" ? 2 : 1;
      this.buffer = this.buffer.slice(end + skip);
      const dispatched = this.line(line);
      if (dispatched) out.push(dispatched);
    }
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") {
      if (!this.data.length) {
        this.event = "";
        return undefined;
      }
      const dispatched = { event: this.event || "message", data: this.data.join("\n"), id: this.id };
      this.event = "";
      this.data = [];
      return dispatched;
    }
    if (line.startsWith(":")) return undefined; // a comment (keep-alive ping)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id") this.id = value;
    return undefined;
  }
}

/** Read the job's SSE stream until it ends; every `job` event goes to `onJob`. Throws when the
 * stream cannot be opened or breaks. */
async function stream(id: string, signal: AbortSignal, onJob: (job: Job) => void): Promise<void> {
  const answer = await fetch(`/v1/jobs/${encodeURIComponent(id)}/events`, {
    headers: { Accept: "text/event-stream", Authorization: `Bearer ${getToken()}` },
    signal,
  });
  if (!answer.ok || !answer.body) throw new Error(`job stream: ${answer.status} ${answer.statusText}`);
  const reader = answer.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      const text = done ? decoder.decode() + "\n\n" : decoder.decode(value, { stream: true });
      for (const event of parser.push(text)) {
        if (event.event === "job") onJob(JSON.parse(event.data) as Job);
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = window.setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      window.clearTimeout(timer);
      resolve();
    });
  });
}

/** Follow one job to its end: the stream first, polling every 2 s if the stream fails or ends
 * before the job does. `onTrouble` hears why the panel may be out of date. */
async function follow(
  first: Job,
  signal: AbortSignal,
  onJob: (job: Job) => void,
  onTrouble: (trouble: unknown) => void,
): Promise<void> {
  const id = first.id ?? "";
  let last = first;
  const seen = (job: Job) => {
    last = job;
    onJob(job);
  };
  try {
    await stream(id, signal, seen);
  } catch {
    if (signal.aborted) return;
    // the stream failed: polling below takes over
  }
  let failures = 0;
  while (!signal.aborted && !isTerminal(last.state)) {
    try {
      seen(await api("get", "/v1/jobs/{id}", { path: { id }, signal }));
      failures = 0;
      onTrouble(undefined);
    } catch (error) {
      if (signal.aborted) return;
      failures += 1;
      onTrouble(error);
      if (failures >= POLL_GIVE_UP) return;
    }
    if (!isTerminal(last.state)) await pause(POLL_MS, signal);
  }
}

// ---------------------------------------------------------------- the provider

const SAVED_KEY = "engram.jobs";

function savedJobIds(): string[] {
  try {
    const ids: unknown = JSON.parse(sessionStorage.getItem(SAVED_KEY) ?? "[]");
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string").slice(0, 20) : [];
  } catch {
    return [];
  }
}

export function JobsProvider({ children }: { children: ReactNode }) {
  const queries = useQueryClient();
  const [jobs, setJobs] = useState<Watched[]>([]);
  const followers = useRef(new Map<string, AbortController>());
  const states = useRef(new Map<string, string | undefined>());

  const patch = useCallback((id: string, change: (w: Watched) => Watched) => {
    setJobs((list) => list.map((w) => (w.job.id === id ? change(w) : w)));
  }, []);

  const update = useCallback(
    (job: Job) => {
      const id = job.id ?? "";
      const before = states.current.get(id);
      states.current.set(id, job.state);
      if (isTerminal(job.state) && !isTerminal(before)) {
        for (const key of CHANGED_BY_JOBS) void queries.invalidateQueries({ queryKey: [key, job.store ?? ""] });
      }
      patch(id, (w) => ({ ...w, job }));
    },
    [patch, queries],
  );

  const watch = useCallback(
    (job: Job) => {
      const id = job.id;
      if (!id) return;
      setJobs((list) => (list.some((w) => w.job.id === id) ? list : [{ job }, ...list]));
      if (followers.current.has(id)) return;
      const control = new AbortController();
      followers.current.set(id, control);
      void follow(job, control.signal, update, (trouble) => patch(id, (w) => ({ ...w, trouble }))).finally(() => {
        if (followers.current.get(id) === control) followers.current.delete(id);
      });
    },
    [patch, update],
  );

  const close = useCallback((id: string) => {
    followers.current.get(id)?.abort();
    followers.current.delete(id);
    states.current.delete(id);
    setJobs((list) => list.filter((w) => w.job.id !== id));
  }, []);

  // A reload keeps the panel: the watched ids live in session storage and are followed again.
  const alive = useRef(false);
  useEffect(() => {
    alive.current = true;
    for (const id of savedJobIds()) {
      api("get", "/v1/jobs/{id}", { path: { id } }).then(
        (job) => alive.current && watch(job),
        () => undefined, // gone, or not this token's: nothing to show
      );
    }
    const running = followers.current;
    return () => {
      alive.current = false;
      for (const control of running.values()) control.abort();
      running.clear();
      sessionStorage.removeItem(SAVED_KEY); // signed out: the next operator starts clean
    };
  }, [watch]);
  const hadJobs = useRef(false);
  useEffect(() => {
    if (jobs.length) {
      hadJobs.current = true;
      sessionStorage.setItem(SAVED_KEY, JSON.stringify(jobs.map((w) => w.job.id)));
    } else if (hadJobs.current) {
      sessionStorage.removeItem(SAVED_KEY); // every job closed
    }
  }, [jobs]);

  const value = useMemo(() => ({ watch, jobs, update, close }), [watch, jobs, update, close]);
  return <JobsContext.Provider value={value}>{children}</JobsContext.Provider>;
}

// ---------------------------------------------------------------- the panel

export function JobsPanel() {
  const context = useContext(JobsContext);
  const [folded, setFolded] = useState(false);
  const jobs = context?.jobs ?? [];
  const shown = jobs.length > 0;
  const newest = jobs[0]?.job.id;
  useEffect(() => setFolded(false), [newest]); // a newly watched job unfolds the panel
  // the page scrolls past the panel, so nothing stays hidden under it
  useEffect(() => {
    document.body.classList.toggle("jobs-open", shown && !folded);
    document.body.classList.toggle("jobs-folded", shown && folded);
    return () => document.body.classList.remove("jobs-open", "jobs-folded");
  }, [shown, folded]);
  if (!context || !shown) return null;
  const finished = jobs.filter((w) => isTerminal(w.job.state));
  const running = jobs.length - finished.length;
  return (
    <aside className={`jobs-panel${folded ? " folded" : ""}`} role="region" aria-label="jobs">
      <header className="card-head">
        <h2>
          jobs · {jobs.length}
          {running > 0 && <span className="count"> · {running} running</span>}
        </h2>
        <div className="card-actions">
          {finished.length > 0 && (
            <button type="button" onClick={() => finished.forEach((w) => context.close(w.job.id ?? ""))}>
              clear finished
            </button>
          )}
          <button type="button" aria-expanded={!folded} aria-controls="jobs-list" onClick={() => setFolded(!folded)}>
            {folded ? "show" : "hide"}
          </button>
        </div>
      </header>
      <ul className="jobs-list" id="jobs-list" hidden={folded}>
        {jobs.map((w) => (
          <JobItem key={w.job.id} watched={w} />
        ))}
      </ul>
    </aside>
  );
}

const STATE_SYMBOL: Record<string, string> = {
  queued: "◌",
  running: "◐",
  done: "✓",
  failed: "✕",
  cancelled: "⊘",
};

function stateName(state: string | undefined): string {
  return (state ?? "").replace("JOB_STATE_", "").toLowerCase() || "unknown";
}

/** The job's state as a word (and a symbol), never by colour alone. */
function JobState({ state }: { state: string | undefined }) {
  const name = stateName(state);
  return (
    <span className={`badge job-${name}`}>
      {STATE_SYMBOL[name] && <span aria-hidden="true">{STATE_SYMBOL[name]} </span>}
      <span className="job-state">{name}</span>
    </span>
  );
}

function JobItem({ watched }: { watched: Watched }) {
  const context = useContext(JobsContext);
  const tier = useTier();
  const [cancelError, setCancelError] = useState<unknown>(null);
  const [cancelling, setCancelling] = useState(false);
  const { job, trouble } = watched;
  const id = job.id ?? "";
  const short = id.slice(0, 8);
  const terminal = isTerminal(job.state);

  const cancel = async () => {
    setCancelling(true);
    setCancelError(null);
    try {
      context?.update(await api("post", "/v1/jobs/{id}:cancel", { path: { id } }));
    } catch (error) {
      setCancelError(error);
    } finally {
      setCancelling(false);
    }
  };

  return (
    <li className="job" aria-label={`job ${job.kind ?? ""} ${short}`}>
      <div className="job-head">
        <strong>{job.kind || "job"}</strong>
        <span className="count">{job.store}</span>
        <JobState state={job.state} />
        {job.cancel_requested && !terminal && <span className="muted">cancelling…</span>}
        <span className="job-buttons">
          {!terminal && allows(tier, "write") && (
            <button type="button" className="danger" disabled={cancelling || !!job.cancel_requested} onClick={() => void cancel()} aria-label={`cancel job ${short}`}>
              cancel
            </button>
          )}
          <button type="button" onClick={() => context?.close(id)} aria-label={`close job ${short}`}>
            close
          </button>
        </span>
      </div>
      <Progress job={job} />
      {job.error && <p className="error">{job.error}</p>}
      <Outcome job={job} />
      <ItemErrors job={job} />
      <ErrorNote error={cancelError} />
      {trouble ? (
        <p className="notice" role="status">
          live progress interrupted: {trouble instanceof Error ? trouble.message : String(trouble)}
        </p>
      ) : null}
      <p className="count">
        {short} · started {when(job.started_at ?? job.created_at)}
        {job.finished_at && ` · finished ${when(job.finished_at)}`}
        {Number(job.attempts ?? 0) > 1 && ` · attempt ${job.attempts}`}
      </p>
    </li>
  );
}

function Progress({ job }: { job: Job }) {
  const progress = job.progress ?? {};
  const done = Number(progress.items_done ?? 0);
  const total = Number(progress.items_total ?? 0);
  const units = Number(progress.units_done ?? 0);
  const terminal = isTerminal(job.state);
  const share = total > 0 ? Math.min(1, done / total) : job.state === "JOB_STATE_DONE" ? 1 : 0;
  return (
    <div>
      <div
        className="progress"
        role="progressbar"
        aria-label={`progress of job ${(job.id ?? "").slice(0, 8)}`}
        aria-valuemin={0}
        aria-valuemax={total || 1}
        aria-valuenow={total ? done : terminal ? 1 : 0}
        aria-valuetext={total ? `${done} of ${total}` : terminal ? "finished" : "starting"}
      >
        <div style={{ width: `${Math.round(share * 100)}%` }} />
      </div>
      <p className="count">
        {total > 0 ? `${done}/${total} items` : terminal ? "" : "counting items…"}
        {(units > 0 || progress.unit) && ` · ${units} ${progress.unit || "units"}`}
        {progress.message && ` · ${progress.message}`}
      </p>
    </div>
  );
}

/** What the finished job did, by kind. */
function Outcome({ job }: { job: Job }) {
  const parts: string[] = [];
  if (job.ingest) {
    parts.push(`${job.ingest.files ?? 0} files`, `${job.ingest.chunks ?? 0} chunks`);
    if (job.ingest.failed) parts.push(`${job.ingest.failed} failed`);
  }
  if (job.compose) {
    const c = job.compose;
    parts.push(`${c.sessions ?? 0} sessions`, `${c.drawers_written ?? 0} drawers written`);
    if (Number(c.drawers_replaced ?? 0)) parts.push(`${c.drawers_replaced} replaced`);
    if (Number(c.drafts_rejected ?? 0)) parts.push(`${c.drafts_rejected} drafts rejected`);
    if (c.failed_sessions) parts.push(`${c.failed_sessions} sessions failed`);
    if (c.model) parts.push(`model ${c.model}`);
  }
  if (job.consolidate) {
    const c = job.consolidate;
    parts.push(`${c.drawers_considered ?? 0} considered`, `${c.flagged ?? 0} flagged`, `${c.applied ?? 0} applied`);
    if (c.dry_run) parts.push("dry run");
  }
  if (job.reembed) {
    parts.push(`${job.reembed.raw_chunks ?? 0} raw chunks`, `${job.reembed.source_chunks ?? 0} source chunks`);
    if (job.reembed.model) parts.push(`model ${job.reembed.model}`);
  }
  if (!parts.length) return null;
  return <p className="job-outcome">{parts.join(" · ")}</p>;
}

function ItemErrors({ job }: { job: Job }) {
  const errors = job.errors ?? [];
  if (!errors.length) return null;
  const total = Number(job.errors_total ?? errors.length);
  return (
    <details className="job-errors">
      <summary>
        {total} item error{total === 1 ? "" : "s"}
      </summary>
      <ul>
        {errors.map((e, i) => (
          <li key={`${e.item_id}-${i}`}>
            <code>{e.item_id}</code> <span className="badge">{e.code}</span> {e.message}
          </li>
        ))}
      </ul>
      {total > errors.length && <p className="muted">showing the first {errors.length}</p>}
    </details>
  );
}
