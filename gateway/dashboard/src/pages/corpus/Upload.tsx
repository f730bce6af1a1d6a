// Uploads into the open folder: the drop zone and file picker, the list of what was sent and
// how it went, and a shortcut to select the files just stored here.
import { useQueryClient } from "@tanstack/react-query";
import { useRef, useState, type DragEvent } from "react";
import { uploadFile } from "../../api/client";
import { Card, ErrorNote, bytes } from "../../components/ui";
import { fileState, folderLabel, refresh, type CorpusFile } from "./shared";

type Sent = { key: string; name: string; state: "sending" | "done" | "failed"; file?: CorpusFile; error?: unknown };

export function Upload({ store, folder, onSelect }: { store: string; folder: string; onSelect: (files: CorpusFile[]) => void }) {
  const queries = useQueryClient();
  const [over, setOver] = useState(false);
  const [sent, setSent] = useState<Sent[]>([]);
  const picker = useRef<HTMLInputElement>(null);
  const serial = useRef(0);

  const send = async (files: File[]) => {
    const batch = files.map((file) => ({ key: `${serial.current++}`, name: file.name, state: "sending" as const }));
    setSent((list) => [...batch, ...list].slice(0, 50));
    for (const [i, file] of files.entries()) {
      const key = batch[i].key;
      try {
        const stored = await uploadFile(store, file, folder);
        setSent((list) => list.map((s) => (s.key === key ? { ...s, state: "done", file: stored } : s)));
      } catch (error) {
        setSent((list) => list.map((s) => (s.key === key ? { ...s, state: "failed", error } : s)));
      }
      refresh(queries, store);
    }
    if (picker.current) picker.current.value = "";
  };

  const drop = (event: DragEvent<HTMLDivElement>) => {
    event.preventDefault();
    setOver(false);
    const files = [...event.dataTransfer.files];
    if (files.length) void send(files);
  };

  const stored = sent.filter((s) => s.state === "done" && s.file && (s.file.folder ?? "") === folder).map((s) => s.file!);
  return (
    <Card title={`upload into ${folderLabel(folder)}`}>
      <div
        className={`dropzone${over ? " over" : ""}`}
        role="group"
        aria-label="drop files here to upload"
        onDragOver={(event) => {
          event.preventDefault();
          setOver(true);
        }}
        onDragEnter={(event) => {
          event.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={drop}
      >
        <p>drop files here, or</p>
        <label className="label" htmlFor="corpus-upload">
          choose files to upload
        </label>
        <input
          id="corpus-upload"
          ref={picker}
          type="file"
          multiple
          onChange={(event) => {
            const files = [...(event.target.files ?? [])];
            if (files.length) void send(files);
          }}
        />
      </div>
      {sent.length > 0 && (
        <>
          <ul className="uploads" aria-label="uploads">
            {sent.map((s) => (
              <li key={s.key}>
                <span className="badge">{s.state === "sending" ? "… sending" : s.state === "done" ? "✓ stored" : "✕ failed"}</span>{" "}
                {s.name}
                {s.file && (
                  <span className="count">
                    {" "}
                    · {folderLabel(s.file.folder ?? "")} · {bytes(Number(s.file.size_bytes ?? 0))} · {s.file.detected_type} ·{" "}
                    {fileState(s.file.state).name}
                  </span>
                )}
                <ErrorNote error={s.error} />
              </li>
            ))}
          </ul>
          <div className="row">
            {stored.length > 0 && (
              <button type="button" onClick={() => onSelect(stored)}>
                select the {stored.length} uploaded here
              </button>
            )}
            <button type="button" onClick={() => setSent([])}>
              clear upload list
            </button>
          </div>
        </>
      )}
    </Card>
  );
}
