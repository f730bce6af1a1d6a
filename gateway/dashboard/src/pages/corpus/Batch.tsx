// The actions on the selected files: ingest them (raw chunks), compose them (drawers), or walk
// authored ones back (delete their drawers, optionally their raw chunks and the files).
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type S } from "../../api/client";
import { useJobs } from "../../components/Jobs";
import { ErrorNote } from "../../components/ui";
import { refresh, type CorpusFile } from "./shared";

type Job = S<"engram.v1.Job">;

export function Batch({ store, selected, onDone }: { store: string; selected: Map<string, CorpusFile>; onDone: () => void }) {
  const queries = useQueryClient();
  const { watch } = useJobs();
  const [allowNewWing, setAllowNewWing] = useState(false);
  const [replace, setReplace] = useState(false);
  const [walking, setWalking] = useState(false);
  const [deleteRaw, setDeleteRaw] = useState(false);
  const [outcome, setOutcome] = useState("");
  const ids = [...selected.keys()];
  const authored = [...selected.values()].filter((f) => f.state === "FILE_STATE_AUTHORED");
  const n = ids.length;

  const started = (job: Job) => {
    watch(job);
    setOutcome(`${job.kind || "job"} ${(job.id ?? "").slice(0, 8)} started: see the jobs panel`);
    onDone();
  };
  const ingest = useMutation({
    mutationFn: async () =>
      (await api("post", "/v1/stores/{store}/ingest", { path: { store }, body: { file_ids: ids } })) as Job,
    onSuccess: started,
  });
  const compose = useMutation({
    mutationFn: async () =>
      (await api("post", "/v1/stores/{store}/authoring/compose", {
        path: { store },
        body: { file_ids: ids, allow_new_wing: allowNewWing, replace_existing: replace },
      })) as Job,
    onSuccess: started,
  });
  const walkback = useMutation({
    mutationFn: () =>
      api("post", "/v1/stores/{store}/authoring/walkback", {
        path: { store },
        body: { file_ids: authored.map((f) => f.id ?? ""), delete_raw: deleteRaw },
      }),
    onSuccess: (answer) => {
      refresh(queries, store, ["files", "tree", "stats", "drawers", "sessions"]);
      setOutcome(`walked back: ${answer.drawers_deleted ?? 0} drawers deleted, ${answer.raw_chunks_deleted ?? 0} raw chunks deleted`);
      setWalking(false);
      onDone();
    },
  });

  return (
    <div className="batch" role="group" aria-label="selected files">
      <div className="row">
        <span className="muted">{n} selected</span>
        <button type="button" className="primary" disabled={!n || ingest.isPending} onClick={() => ingest.mutate()}>
          ingest {n} {n === 1 ? "file" : "files"}
        </button>
        <button type="button" disabled={!n || compose.isPending} onClick={() => compose.mutate()}>
          compose
        </button>
        <label>
          <input type="checkbox" checked={allowNewWing} onChange={(e) => setAllowNewWing(e.target.checked)} /> allow new wing
        </label>
        <label>
          <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.target.checked)} /> replace existing drawers
        </label>
        <button type="button" className="danger" disabled={!authored.length} aria-expanded={walking} onClick={() => setWalking(!walking)}>
          walk back
        </button>
        {n > 0 && (
          <button type="button" onClick={onDone}>
            clear selection
          </button>
        )}
      </div>
      {walking && authored.length > 0 && (
        <fieldset className="confirm">
          <legend>
            walk back {authored.length} authored file{authored.length === 1 ? "" : "s"}?
          </legend>
          <p>
            Deletes the {authored.reduce((sum, f) => sum + Number(f.derived_drawer_count ?? 0), 0)} drawers composed from{" "}
            {authored.map((f) => f.name).join(", ")}.
          </p>
          <label>
            <input type="checkbox" checked={deleteRaw} onChange={(e) => setDeleteRaw(e.target.checked)} /> also delete their raw
            chunks and the files themselves
          </label>
          <div className="row">
            <button type="button" className="danger" disabled={walkback.isPending} onClick={() => walkback.mutate()}>
              confirm walk back
            </button>
            <button type="button" onClick={() => setWalking(false)}>
              keep them
            </button>
          </div>
        </fieldset>
      )}
      <ErrorNote error={ingest.error ?? compose.error ?? walkback.error} />
      {outcome && (
        <p className="muted" role="status">
          {outcome}
        </p>
      )}
    </div>
  );
}
