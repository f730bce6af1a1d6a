// The prompt lab: the store's authoring prompt versions, one read in full, two compared as a
// unified diff, an edit saved as a new version, a dry run of any version against one raw
// session (nothing written), and promotion of a version to active (admin).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, type S } from "../../api/client";
import { allows, useTier } from "../../api/hooks";
import { Card, ErrorNote, Loading, when } from "../../components/ui";
import { DraftList, RejectedList } from "./Drafts";

type Version = S<"engram.v1.PromptVersion">;

function usePrompts(store: string) {
  return useQuery({
    queryKey: ["prompts", store],
    queryFn: () => api("get", "/v1/stores/{store}/authoring/prompts", { path: { store } }),
  });
}

function usePromote(store: string) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (version: string) =>
      api("post", "/v1/stores/{store}/authoring/prompts/{version}:promote", { path: { store, version } }),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: ["prompts", store] }),
        queries.invalidateQueries({ queryKey: ["prompt", store] }),
      ]),
  });
}

export function PromptLab({ store }: { store: string }) {
  const prompts = usePrompts(store);
  const versions = prompts.data?.versions ?? [];
  const active = versions.find((v) => v.active)?.version ?? "";
  const [viewed, setViewed] = useState("");
  const shown = viewed || active;
  if (prompts.isLoading) return <Loading what="prompt versions" />;
  return (
    <>
      <ErrorNote error={prompts.error} />
      <VersionList store={store} versions={versions} viewed={shown} onView={setViewed} />
      {shown && <VersionView key={`${store}-${shown}`} store={store} version={shown} onSaved={setViewed} />}
      {versions.length > 1 && <DiffView store={store} versions={versions} active={active} viewed={shown} />}
      <SmokeTest store={store} versions={versions} viewed={shown} />
    </>
  );
}

function VersionList({
  store,
  versions,
  viewed,
  onView,
}: {
  store: string;
  versions: Version[];
  viewed: string;
  onView: (version: string) => void;
}) {
  const admin = allows(useTier(), "admin");
  const promote = usePromote(store);
  return (
    <Card title="prompt versions">
      {!versions.length && <p className="muted">This store has no prompt versions.</p>}
      {!!versions.length && (
        <table aria-label="prompt versions">
          <thead>
            <tr>
              <th>version</th>
              <th>state</th>
              <th>created</th>
              <th>by</th>
              <th>note</th>
              <th>actions</th>
            </tr>
          </thead>
          <tbody>
            {versions.map((v) => (
              <tr key={v.version} aria-current={v.version === viewed ? "true" : undefined}>
                <td>
                  <code>{v.version}</code>
                </td>
                <td>{v.active ? <span className="badge pin-pinned">active</span> : <span className="muted">inactive</span>}</td>
                <td className="count">{when(v.created_at)}</td>
                <td>{v.created_by}</td>
                <td>{v.note}</td>
                <td className="row">
                  <button type="button" disabled={v.version === viewed} onClick={() => onView(v.version ?? "")}>
                    view <span className="sr-only">{v.version}</span>
                  </button>
                  {admin && !v.active && (
                    <button type="button" disabled={promote.isPending} onClick={() => promote.mutate(v.version ?? "")}>
                      promote <span className="sr-only">{v.version}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ErrorNote error={promote.error} />
      {!admin && <p className="muted">Promoting a version to active needs an admin token.</p>}
    </Card>
  );
}

function VersionView({ store, version, onSaved }: { store: string; version: string; onSaved: (version: string) => void }) {
  const canWrite = allows(useTier(), "write");
  const one = useQuery({
    queryKey: ["prompt", store, version],
    queryFn: () => api("get", "/v1/stores/{store}/authoring/prompts/{version}", { path: { store, version } }),
  });
  const [editing, setEditing] = useState(false);
  const text = one.data?.text ?? "";
  return (
    <Card
      title={`version · ${version}`}
      actions={
        canWrite &&
        one.data && (
          <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
            {editing ? "close editor" : "edit as new version"}
          </button>
        )
      }
    >
      {one.isLoading && <Loading what="prompt" />}
      <ErrorNote error={one.error} />
      {one.data && (
        <>
          <p className="muted">
            {one.data.active ? "active" : "inactive"} · created {when(one.data.created_at)} by {one.data.created_by}
            {one.data.note ? ` · ${one.data.note}` : ""} · {text.length} characters
          </p>
          {editing ? (
            <Editor
              store={store}
              base={version}
              text={text}
              onSaved={(saved) => {
                setEditing(false);
                onSaved(saved);
              }}
            />
          ) : (
            <pre className="prompt-text" tabIndex={0} aria-label={`prompt text of ${version}`}>
              {text}
            </pre>
          )}
        </>
      )}
    </Card>
  );
}

function Editor({ store, base, text, onSaved }: { store: string; base: string; text: string; onSaved: (version: string) => void }) {
  const queries = useQueryClient();
  const [draft, setDraft] = useState(text);
  const [note, setNote] = useState(`edited from ${base}`);
  const [name, setName] = useState("");
  const save = useMutation({
    mutationFn: () =>
      api("post", "/v1/stores/{store}/authoring/prompts", { path: { store }, body: { text: draft, note, version: name.trim() } }),
    onSuccess: async (created) => {
      await queries.invalidateQueries({ queryKey: ["prompts", store] });
      onSaved(created.version ?? "");
    },
  });
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <label className="label" htmlFor="prompt-text">
        prompt text (from {base})
      </label>
      <textarea id="prompt-text" rows={24} value={draft} onChange={(e) => setDraft(e.target.value)} />
      <div className="row">
        <div style={{ flex: "1 1 320px" }}>
          <label className="label" htmlFor="prompt-note">
            note
          </label>
          <input id="prompt-note" value={note} onChange={(e) => setNote(e.target.value)} />
        </div>
        <div>
          <label className="label" htmlFor="prompt-name">
            version name (empty: next number)
          </label>
          <input id="prompt-name" value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <div>
          <button type="submit" className="primary" disabled={save.isPending || !draft.trim() || draft === text}>
            save as new version
          </button>
        </div>
      </div>
      {draft === text && <p className="muted">Change the text to save it as a new version; the active one is not touched.</p>}
      <ErrorNote error={save.error} />
    </form>
  );
}

function VersionSelect({
  id,
  label,
  versions,
  value,
  onChange,
}: {
  id: string;
  label: string;
  versions: Version[];
  value: string;
  onChange: (version: string) => void;
}) {
  return (
    <div>
      <label className="label" htmlFor={id}>
        {label}
      </label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            {v.version}
            {v.active ? " (active)" : ""}
          </option>
        ))}
      </select>
    </div>
  );
}

function DiffView({ store, versions, active, viewed }: { store: string; versions: Version[]; active: string; viewed: string }) {
  const other = versions.find((v) => v.version !== viewed)?.version ?? "";
  const [from, setFrom] = useState(viewed === active ? other : active);
  const [to, setTo] = useState(viewed);
  useEffect(() => {
    setTo(viewed);
    if (viewed !== active) setFrom(active);
  }, [viewed, active]);
  const diff = useQuery({
    queryKey: ["prompt-diff", store, from, to],
    queryFn: () =>
      api("get", "/v1/stores/{store}/authoring/prompts:diff", { path: { store }, query: { from_version: from, to_version: to } }),
    enabled: !!from && !!to && from !== to,
  });
  return (
    <Card title="diff">
      <div className="row">
        <VersionSelect id="diff-from" label="from" versions={versions} value={from} onChange={setFrom} />
        <VersionSelect id="diff-to" label="to" versions={versions} value={to} onChange={setTo} />
      </div>
      {from === to && <p className="muted">Choose two different versions to compare.</p>}
      {diff.isLoading && <Loading what="diff" />}
      <ErrorNote error={diff.error} />
      {diff.data && <UnifiedDiff text={diff.data.unified_diff ?? ""} />}
    </Card>
  );
}

function lineClass(line: string): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "meta";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "ctx";
}

/** A unified diff, each line coloured by kind and still marked by its own +/- character. */
export function UnifiedDiff({ text }: { text: string }) {
  if (!text.trim()) return <p className="muted">The two versions have the same text.</p>;
  const lines = text.replace(/\n$/, "").split("\n");
  const added = lines.filter((l) => lineClass(l) === "add").length;
  const removed = lines.filter((l) => lineClass(l) === "del").length;
  return (
    <>
      <p className="muted">
        {added} line{added === 1 ? "" : "s"} added (+) · {removed} line{removed === 1 ? "" : "s"} removed (−)
      </p>
      <pre className="diff" aria-label="unified diff">
        {lines.map((line, i) => (
          <span key={i} className={lineClass(line)}>
            {line || " "}
            {"\n"}
          </span>
        ))}
      </pre>
    </>
  );
}

function SmokeTest({ store, versions, viewed }: { store: string; versions: Version[]; viewed: string }) {
  const canWrite = allows(useTier(), "write");
  const sessions = useQuery({
    queryKey: ["raw-sessions", store, "first-page"],
    queryFn: () => api("get", "/v1/stores/{store}/raw/sessions", { path: { store }, query: { page_size: 50 } }),
    enabled: canWrite,
  });
  const list = sessions.data?.sessions ?? [];
  const [picked, setPicked] = useState("");
  const [typed, setTyped] = useState("");
  const [version, setVersion] = useState(viewed);
  const [allowNewWing, setAllowNewWing] = useState(false);
  useEffect(() => setVersion(viewed), [viewed]);
  const chosen = picked || list[0]?.descriptor?.session_id || "";
  const session = typed.trim() || chosen;
  const run = useMutation({
    mutationFn: (body: S<"engram.v1.DryRunRequest">) =>
      api("post", "/v1/stores/{store}/authoring/dry-run", { path: { store }, body }),
  });
  if (!canWrite) {
    return (
      <Card title="smoke test">
        <p className="muted">A dry run of a prompt against a session needs a write token.</p>
      </Card>
    );
  }
  return (
    <Card title="smoke test · dry run of one session">
      <p className="muted">
        Runs the chosen prompt version with the store's provider on one raw session and shows the drawers compose would
        write. Nothing is written.
      </p>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          run.mutate({ session_id: session, prompt_version: version, allow_new_wing: allowNewWing });
        }}
      >
        <div>
          <label className="label" htmlFor="smoke-session">
            session (first {list.length} of {String(sessions.data?.page?.total ?? list.length)})
          </label>
          <select id="smoke-session" value={chosen} onChange={(e) => setPicked(e.target.value)} disabled={!list.length}>
            {!list.length && <option value="">no raw sessions</option>}
            {list.map((s) => (
              <option key={s.descriptor?.session_id} value={s.descriptor?.session_id}>
                {s.descriptor?.session_id} · {s.descriptor?.origin_kind || "?"} · {s.descriptor?.raw_chunk_count ?? 0} chunks
                {s.derived_drawer_count ? ` · ${s.derived_drawer_count} drawers` : ""}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label className="label" htmlFor="smoke-session-id">
            or a session id (used when set)
          </label>
          <input id="smoke-session-id" value={typed} onChange={(e) => setTyped(e.target.value)} />
        </div>
        <VersionSelect id="smoke-version" label="prompt version" versions={versions} value={version} onChange={setVersion} />
        <div>
          <label className="label" htmlFor="smoke-new-wing">
            allow new wing
          </label>
          <input id="smoke-new-wing" type="checkbox" checked={allowNewWing} onChange={(e) => setAllowNewWing(e.target.checked)} />
        </div>
        <div>
          <button type="submit" className="primary" disabled={!session || run.isPending}>
            smoke test
          </button>
        </div>
      </form>
      <ErrorNote error={sessions.error} />
      {run.isPending && <Loading what={`dry run of ${session}`} />}
      <ErrorNote error={run.error} />
      {run.data && <DryRunResult answer={run.data} session={run.variables?.session_id ?? ""} />}
    </Card>
  );
}

function DryRunResult({ answer, session }: { answer: S<"engram.v1.DryRunResponse">; session: string }) {
  const drafts = answer.drawers ?? [];
  const rejected = answer.rejected ?? [];
  return (
    <section aria-label="dry run result">
      <p>
        <span className="label">ran</span>
        prompt <code>{answer.prompt_version}</code> · invoker <code>{answer.invoker}</code> · model{" "}
        <code>{answer.model}</code> · session <code>{session}</code>
      </p>
      <h3>
        would write {drafts.length} drawer{drafts.length === 1 ? "" : "s"}
      </h3>
      <DraftList drafts={drafts} empty="The prompt proposed nothing valid for this session." />
      <h3>rejected · {rejected.length}</h3>
      <RejectedList rejected={rejected} />
    </section>
  );
}
