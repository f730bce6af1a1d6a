// The folder tree of a store's corpus and folder upkeep: create a folder, rename or move it,
// delete it (empty, or with its files and subfolders, optionally their raw chunks).
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api } from "../../api/client";
import { Card, ErrorNote } from "../../components/ui";
import { folderLabel, refresh, type CorpusFolder } from "./shared";

function join(folder: string, name: string): string {
  const clean = name.trim().replace(/^\/+|\/+$/g, "");
  return folder ? `${folder}/${clean}` : clean;
}

export function folderPaths(folder: CorpusFolder | undefined): string[] {
  if (!folder) return [""];
  return [folder.path ?? "", ...(folder.folders ?? []).flatMap(folderPaths)];
}

export function FolderNode({ folder, selected, onSelect }: { folder: CorpusFolder; selected: string; onSelect: (path: string) => void }) {
  const path = folder.path ?? "";
  const name = path ? path.split("/").pop() : "/ (root)";
  const children = folder.folders ?? [];
  return (
    <li>
      <button
        type="button"
        className={`linklike${path === selected ? " active" : ""}`}
        aria-current={path === selected ? "true" : undefined}
        title={folderLabel(path)}
        onClick={() => onSelect(path)}
      >
        {path === selected ? "▸ " : ""}
        {name} <span className="count">{folder.file_count ?? 0}</span>
      </button>
      {children.length > 0 && (
        <ul>
          {children.map((child) => (
            <FolderNode key={child.path} folder={child} selected={selected} onSelect={onSelect} />
          ))}
        </ul>
      )}
    </li>
  );
}

export function FolderActions({ store, folder, onFolder }: { store: string; folder: string; onFolder: (path: string) => void }) {
  const queries = useQueryClient();
  const [name, setName] = useState("");
  const [target, setTarget] = useState(folder);
  const [confirming, setConfirming] = useState(false);
  const [recursive, setRecursive] = useState(false);
  const [deleteRaw, setDeleteRaw] = useState(false);
  const [done, setDone] = useState("");
  useEffect(() => {
    setTarget(folder);
    setConfirming(false);
  }, [folder]);

  const create = useMutation({
    mutationFn: (path: string) => api("post", "/v1/stores/{store}/folders", { path: { store }, body: { path } }),
    onMutate: () => setDone(""),
    onSuccess: (made) => {
      refresh(queries, store, ["tree"]);
      setName("");
      setDone(`created ${folderLabel(made.path ?? "")}`);
    },
  });
  const rename = useMutation({
    mutationFn: (newPath: string) =>
      api("post", "/v1/stores/{store}/folders:rename", { path: { store }, body: { path: folder, new_path: newPath } }),
    onMutate: () => setDone(""),
    onSuccess: (moved) => {
      refresh(queries, store);
      setDone(`renamed to ${folderLabel(moved.path ?? "")}`);
      onFolder(moved.path ?? "");
    },
  });
  const remove = useMutation({
    mutationFn: () =>
      api("delete", "/v1/stores/{store}/folders", {
        path: { store },
        query: { path: folder, recursive, delete_raw: deleteRaw },
      }),
    onMutate: () => setDone(""),
    onSuccess: (answer) => {
      refresh(queries, store, ["files", "tree", "stats", "sessions"]);
      setDone(`deleted ${folderLabel(folder)}: ${answer.files_deleted ?? 0} files, ${answer.raw_chunks_deleted ?? 0} raw chunks`);
      onFolder("");
    },
  });

  return (
    <Card title={`folder · ${folderLabel(folder)}`}>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          if (name.trim()) create.mutate(join(folder, name));
        }}
      >
        <div>
          <label className="label" htmlFor="new-folder">
            new folder in {folderLabel(folder)}
          </label>
          <input id="new-folder" value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <div>
          <button type="submit" disabled={!name.trim() || create.isPending}>
            create folder
          </button>
        </div>
      </form>
      <ErrorNote error={create.error} />
      {folder && (
        <>
          <form
            className="row"
            onSubmit={(event) => {
              event.preventDefault();
              if (target.trim() && target.trim() !== folder) rename.mutate(target.trim().replace(/^\/+|\/+$/g, ""));
            }}
          >
            <div>
              <label className="label" htmlFor="folder-new-path">
                rename or move to (full path)
              </label>
              <input id="folder-new-path" value={target} onChange={(e) => setTarget(e.target.value)} />
            </div>
            <div>
              <button type="submit" disabled={!target.trim() || target.trim() === folder || rename.isPending}>
                rename folder
              </button>
            </div>
          </form>
          <ErrorNote error={rename.error} />
          {!confirming ? (
            <p>
              <button type="button" className="danger" onClick={() => setConfirming(true)}>
                delete folder…
              </button>
            </p>
          ) : (
            <fieldset className="confirm">
              <legend>delete {folderLabel(folder)}?</legend>
              <label>
                <input type="checkbox" checked={recursive} onChange={(e) => setRecursive(e.target.checked)} /> recursive: also
                its files and subfolders
              </label>
              <label>
                <input type="checkbox" checked={deleteRaw} onChange={(e) => setDeleteRaw(e.target.checked)} /> also delete
                the raw chunks ingested from those files
              </label>
              <p className="muted">Without recursive, only an empty folder can be deleted.</p>
              <div className="row">
                <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
                  confirm delete folder
                </button>
                <button type="button" onClick={() => setConfirming(false)}>
                  keep it
                </button>
              </div>
            </fieldset>
          )}
          <ErrorNote error={remove.error} />
        </>
      )}
      {done && (
        <p className="muted" role="status">
          {done}
        </p>
      )}
    </Card>
  );
}
