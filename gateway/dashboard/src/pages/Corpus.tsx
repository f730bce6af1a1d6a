// A store's corpus: the folder tree, the files of one folder (their state on the way from
// uploaded bytes to authored drawers), uploads, folder upkeep, and the jobs that move files
// along — ingest (raw chunks) and compose (drawers) — or walk authored files back. This page
// holds the layout and the open folder and selection; its parts live in ./corpus/.
import { useQuery } from "@tanstack/react-query";
import { useParams } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { api } from "../api/client";
import { allows, useTier } from "../api/hooks";
import { Card, ErrorNote, Loading } from "../components/ui";
import { Files } from "./corpus/Files";
import { FolderActions, FolderNode, folderPaths } from "./corpus/Folders";
import type { CorpusFile } from "./corpus/shared";
import { Upload } from "./corpus/Upload";

export function CorpusPage() {
  const { store } = useParams({ from: "/shell/s/$store/corpus" });
  const canWrite = allows(useTier(), "write");
  const [folder, setFolder] = useState("");
  const [selected, setSelected] = useState<Map<string, CorpusFile>>(new Map());
  const tree = useQuery({
    queryKey: ["tree", store],
    queryFn: () => api("get", "/v1/stores/{store}/tree", { path: { store } }),
  });
  const paths = folderPaths(tree.data?.root);

  const choose = (path: string) => {
    setFolder(path);
    setSelected(new Map());
  };

  // a folder that went away (renamed or deleted elsewhere) leaves the view on the root
  const gone = !!tree.data && !tree.isFetching && !paths.includes(folder);
  useEffect(() => {
    if (!gone) return;
    setFolder("");
    setSelected(new Map());
  }, [gone]);

  return (
    <div>
      <h1 className="page-title">corpus · {store}</h1>
      <div className="corpus-layout">
        <div>
          <Card title="folders">
            {tree.isLoading && <Loading what="folders" />}
            <ErrorNote error={tree.error} />
            {tree.data && (
              <ul className="folder-tree">
                <FolderNode folder={tree.data.root ?? { path: "" }} selected={folder} onSelect={choose} />
              </ul>
            )}
          </Card>
          {canWrite && <FolderActions store={store} folder={folder} onFolder={choose} />}
        </div>
        <div>
          {canWrite && (
            <Upload
              store={store}
              folder={folder}
              onSelect={(files) => {
                const next = new Map(selected);
                for (const file of files) if (file.id && (file.folder ?? "") === folder) next.set(file.id, file);
                setSelected(next);
              }}
            />
          )}
          <Files store={store} folder={folder} folders={paths} canWrite={canWrite} selected={selected} onSelected={setSelected} />
        </div>
      </div>
    </div>
  );
}
