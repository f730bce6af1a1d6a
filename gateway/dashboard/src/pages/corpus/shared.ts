// What the corpus page's parts share: the corpus types, the file states with their symbols,
// folder labels, and which queries a corpus change makes stale.
import type { QueryClient } from "@tanstack/react-query";
import type { S } from "../../api/client";

export type CorpusFile = S<"engram.v1.CorpusFile">;
export type CorpusFolder = S<"engram.v1.CorpusFolder">;
export type FileState = S<"engram.v1.FileState">;

export const FILE_STATES: { value: FileState; symbol: string; name: string }[] = [
  { value: "FILE_STATE_UPLOADED", symbol: "○", name: "uploaded" },
  { value: "FILE_STATE_INGESTED", symbol: "◐", name: "ingested" },
  { value: "FILE_STATE_AUTHORED", symbol: "●", name: "authored" },
  { value: "FILE_STATE_FAILED", symbol: "✕", name: "failed" },
];

/** What corpus changes make stale: the lists on this page and the store's counts. */
export function refresh(queries: QueryClient, store: string, keys = ["files", "tree", "stats"]) {
  for (const key of keys) void queries.invalidateQueries({ queryKey: [key, store] });
}

export function folderLabel(path: string): string {
  return path || "/ (root)";
}

export function fileState(state: string | undefined) {
  return FILE_STATES.find((s) => s.value === state) ?? { value: state, symbol: "?", name: "unknown" };
}
