// The files of one folder: the table (filtered by state, paged), its rows with state badges
// and the chunker's report, selection of files for the batch actions, and moving or deleting
// one file.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { api } from "../../api/client";
import { Card, ErrorNote, Loading, Pager, bytes, when } from "../../components/ui";
import { Batch } from "./Batch";
import { FILE_STATES, fileState, folderLabel, refresh, type CorpusFile, type FileState } from "./shared";

const PAGE_SIZE = 50;

function StateBadge({ state }: { state: string | undefined }) {
  const s = fileState(state);
  return (
    <span className={`badge file-${s.name}`}>
      <span aria-hidden="true">{s.symbol}</span> {s.name}
    </span>
  );
}

export function Files({
  store,
  folder,
  folders,
  canWrite,
  selected,
  onSelected,
}: {
  store: string;
  folder: string;
  folders: string[];
  canWrite: boolean;
  selected: Map<string, CorpusFile>;
  onSelected: (next: Map<string, CorpusFile>) => void;
}) {
  const [tokens, setTokens] = useState<string[]>([""]);
  const [page, setPage] = useState(0);
  const [state, setState] = useState<FileState | "">("");
  useEffect(() => {
    setTokens([""]);
    setPage(0);
  }, [folder, state]);

  const files = useQuery({
    queryKey: ["files", store, folder, state, tokens[page]],
    queryFn: () =>
      api("get", "/v1/stores/{store}/files", {
        path: { store },
        query: { folder, states: state ? [state] : undefined, page_size: PAGE_SIZE, page_token: tokens[page] || undefined },
      }),
  });
  const list = files.data?.files ?? [];
  const next = files.data?.page?.next_page_token ?? "";

  // keep the selection's copies current (a job moved a file from uploaded to ingested)
  useEffect(() => {
    const shown = files.data?.files ?? [];
    if (!shown.some((f) => f.id && selected.has(f.id) && selected.get(f.id) !== f)) return;
    const fresh = new Map(selected);
    for (const f of shown) if (f.id && fresh.has(f.id)) fresh.set(f.id, f);
    onSelected(fresh);
  }, [files.data, selected, onSelected]);

  const toggle = (file: CorpusFile, on: boolean) => {
    const fresh = new Map(selected);
    if (on) fresh.set(file.id ?? "", file);
    else fresh.delete(file.id ?? "");
    onSelected(fresh);
  };
  const allOnPage = list.length > 0 && list.every((f) => selected.has(f.id ?? ""));
  const someOnPage = list.some((f) => selected.has(f.id ?? ""));
  const toggleAll = (on: boolean) => {
    const fresh = new Map(selected);
    for (const f of list) {
      if (on) fresh.set(f.id ?? "", f);
      else fresh.delete(f.id ?? "");
    }
    onSelected(fresh);
  };

  return (
    <Card
      title={`files · ${folderLabel(folder)}`}
      actions={
        <div>
          <label className="label" htmlFor="file-state-filter">
            state
          </label>
          <select id="file-state-filter" value={state} onChange={(e) => setState(e.target.value as FileState | "")}>
            <option value="">all</option>
            {FILE_STATES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.symbol} {s.name}
              </option>
            ))}
          </select>
        </div>
      }
    >
      {canWrite && <Batch store={store} selected={selected} onDone={() => onSelected(new Map())} />}
      {files.isLoading && <Loading what="files" />}
      <ErrorNote error={files.error} />
      {files.data && list.length === 0 && (
        <p className="muted">{state ? `No ${fileState(state).name} files in this folder.` : "No files in this folder yet."}</p>
      )}
      {list.length > 0 && (
        <table aria-label="files">
          <thead>
            <tr>
              {canWrite && (
                <th>
                  <SelectAll checked={allOnPage} mixed={someOnPage && !allOnPage} onChange={toggleAll} />
                </th>
              )}
              <th>name</th>
              <th className="num">size</th>
              <th>state</th>
              <th className="num">chunks</th>
              <th className="num">drawers</th>
              <th>updated</th>
              {canWrite && <th>actions</th>}
            </tr>
          </thead>
          <tbody>
            {list.map((file) => (
              <FileRow
                key={file.id}
                store={store}
                file={file}
                folders={folders}
                canWrite={canWrite}
                checked={selected.has(file.id ?? "")}
                onCheck={(on) => toggle(file, on)}
              />
            ))}
          </tbody>
        </table>
      )}
      <Pager
        page={page}
        hasNext={!!next}
        total={files.data?.page?.total}
        onPage={(to) => {
          if (to > page && next) setTokens([...tokens.slice(0, page + 1), next]);
          setPage(to);
        }}
      />
    </Card>
  );
}

function SelectAll({ checked, mixed, onChange }: { checked: boolean; mixed: boolean; onChange: (on: boolean) => void }) {
  const box = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (box.current) box.current.indeterminate = mixed;
  }, [mixed]);
  return (
    <>
      <label htmlFor="files-select-all" className="sr-only">
        select all files on this page
      </label>
      <input id="files-select-all" ref={box} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
    </>
  );
}

function FileRow({
  store,
  file,
  folders,
  canWrite,
  checked,
  onCheck,
}: {
  store: string;
  file: CorpusFile;
  folders: string[];
  canWrite: boolean;
  checked: boolean;
  onCheck: (on: boolean) => void;
}) {
  const [open, setOpen] = useState<"" | "move" | "delete">("");
  const id = useId();
  const name = file.name ?? "";
  // what the chunker noticed (replaced bytes, malformed lines, …): only what is not zero
  const report = Object.entries(file.report ?? {}).filter(([, value]) => value !== "" && value !== "0");
  return (
    <>
      <tr>
        {canWrite && (
          <td>
            <label htmlFor={`${id}-pick`} className="sr-only">
              select {name}
            </label>
            <input id={`${id}-pick`} type="checkbox" checked={checked} onChange={(e) => onCheck(e.target.checked)} />
          </td>
        )}
        <td>
          <span title={file.id}>{name}</span> <span className="count">{file.detected_type}</span>
          {file.last_error && <p className="error">{file.last_error}</p>}
          {report.length > 0 && (
            <p className="count">{report.map(([key, value]) => `${key.replace(/_/g, " ")}: ${value}`).join(" · ")}</p>
          )}
        </td>
        <td className="num">{bytes(Number(file.size_bytes ?? 0))}</td>
        <td>
          <StateBadge state={file.state} />
        </td>
        <td className="num">{file.chunk_count ?? 0}</td>
        <td className="num">{file.derived_drawer_count ?? 0}</td>
        <td className="count">{when(file.updated_at)}</td>
        {canWrite && (
          <td>
            <div className="row">
              <button type="button" aria-expanded={open === "move"} aria-label={`move ${name}`} onClick={() => setOpen(open === "move" ? "" : "move")}>
                move
              </button>
              <button
                type="button"
                className="danger"
                aria-expanded={open === "delete"}
                aria-label={`delete ${name}`}
                onClick={() => setOpen(open === "delete" ? "" : "delete")}
              >
                delete
              </button>
            </div>
          </td>
        )}
      </tr>
      {open && (
        <tr>
          <td colSpan={canWrite ? 8 : 6}>
            {open === "move" ? (
              <MoveFile store={store} file={file} folders={folders} onDone={() => setOpen("")} />
            ) : (
              <DeleteFile store={store} file={file} onDone={() => setOpen("")} />
            )}
          </td>
        </tr>
      )}
    </>
  );
}

function MoveFile({ store, file, folders, onDone }: { store: string; file: CorpusFile; folders: string[]; onDone: () => void }) {
  const queries = useQueryClient();
  const id = useId();
  const [to, setTo] = useState(file.folder ?? "");
  const [name, setName] = useState(file.name ?? "");
  const move = useMutation({
    mutationFn: () =>
      api("post", "/v1/stores/{store}/files/{file_id}:move", {
        path: { store, file_id: file.id ?? "" },
        body: { folder: to, new_name: name.trim() === file.name ? "" : name.trim() },
      }),
    onSuccess: () => {
      refresh(queries, store);
      onDone();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    move.mutate();
  };
  return (
    <form className="row" onSubmit={submit} aria-label={`move ${file.name}`}>
      <div>
        <label className="label" htmlFor={`${id}-folder`}>
          to folder
        </label>
        <select id={`${id}-folder`} value={to} onChange={(e) => setTo(e.target.value)}>
          {folders.map((path) => (
            <option key={path} value={path}>
              {folderLabel(path)}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label className="label" htmlFor={`${id}-name`}>
          name
        </label>
        <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} />
      </div>
      <div>
        <button type="submit" className="primary" disabled={move.isPending || !name.trim()}>
          move file
        </button>
      </div>
      <ErrorNote error={move.error} />
    </form>
  );
}

function DeleteFile({ store, file, onDone }: { store: string; file: CorpusFile; onDone: () => void }) {
  const queries = useQueryClient();
  const [deleteRaw, setDeleteRaw] = useState(false);
  const remove = useMutation({
    mutationFn: () =>
      api("delete", "/v1/stores/{store}/files/{file_id}", {
        path: { store, file_id: file.id ?? "" },
        query: { delete_raw: deleteRaw },
      }),
    onSuccess: () => {
      refresh(queries, store, ["files", "tree", "stats", "sessions"]);
      onDone();
    },
  });
  return (
    <fieldset className="confirm">
      <legend>delete {file.name}?</legend>
      <label>
        <input type="checkbox" checked={deleteRaw} onChange={(e) => setDeleteRaw(e.target.checked)} /> also delete the raw chunks
        ingested from it
      </label>
      {Number(file.derived_drawer_count ?? 0) > 0 && (
        <p className="notice">
          {file.derived_drawer_count} drawers derive from it: walk it back first to remove them too.
        </p>
      )}
      <div className="row">
        <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
          confirm delete file
        </button>
        <button type="button" onClick={onDone}>
          keep it
        </button>
      </div>
      <ErrorNote error={remove.error} />
    </fieldset>
  );
}
