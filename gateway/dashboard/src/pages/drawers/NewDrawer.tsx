// The form that writes a new drawer (write tier), with the write's verdict under it.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../api/client";
import { useStats } from "../../api/hooks";
import { Card, ErrorNote } from "../../components/ui";
import { WriteOutcome } from "./WriteOutcome";

type Draft = {
  content: string;
  memory_type: string;
  wing: string;
  room: string;
  topic: string;
  reason: string;
  supersedes: string;
  allow_new_wing: boolean;
};

export function NewDrawer({ store, onWritten }: { store: string; onWritten: () => void }) {
  const queries = useQueryClient();
  const info = useQuery({
    queryKey: ["store", store],
    queryFn: () => api("get", "/v1/stores/{store}", { path: { store } }),
  });
  const stats = useStats(store);
  const types = info.data?.search_defaults?.memory_types ?? [];
  const wings = stats.data?.facets?.wings ?? [];
  const [draft, setDraft] = useState<Draft>({
    content: "",
    memory_type: "",
    wing: "",
    room: "",
    topic: "",
    reason: "",
    supersedes: "",
    allow_new_wing: false,
  });
  const rooms = wings.find((w) => w.wing === draft.wing)?.rooms ?? [];
  const write = useMutation({
    mutationFn: () =>
      api("post", "/v1/stores/{store}/drawers", {
        path: { store },
        body: {
          drawer: {
            content: draft.content.trim(),
            memory_type: draft.memory_type,
            wing: draft.wing.trim(),
            room: draft.room.trim(),
            topic: draft.topic.trim(),
          },
          reason: draft.reason.trim(),
          allow_new_wing: draft.allow_new_wing,
          supersedes: draft.supersedes.split(/[\s,]+/).filter(Boolean),
        },
      }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ["drawers", store] });
      void queries.invalidateQueries({ queryKey: ["stats", store] });
      onWritten();
    },
  });
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const ready = draft.content.trim() && draft.memory_type && draft.wing.trim() && draft.room.trim();
  return (
    <Card title="new drawer">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          write.mutate();
        }}
      >
        <label className="label" htmlFor="new-content">
          content (1–3 sentences, third person: name who it is about)
        </label>
        <textarea id="new-content" rows={3} required value={draft.content} onChange={(e) => set({ content: e.target.value })} />
        <div className="row">
          <div>
            <label className="label" htmlFor="new-type">
              memory type
            </label>
            <select id="new-type" required value={draft.memory_type} onChange={(e) => set({ memory_type: e.target.value })}>
              <option value="">— choose —</option>
              {types.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label className="label" htmlFor="new-wing">
              wing
            </label>
            <input id="new-wing" type="text" required list="new-wing-list" value={draft.wing} onChange={(e) => set({ wing: e.target.value })} />
            <datalist id="new-wing-list">
              {wings.map((w) => (
                <option key={w.wing} value={w.wing} />
              ))}
            </datalist>
          </div>
          <div>
            <label className="label" htmlFor="new-room">
              room (wing/name)
            </label>
            <input
              id="new-room"
              type="text"
              required
              list="new-room-list"
              value={draft.room}
              placeholder={draft.wing ? `${draft.wing}/…` : "wing/name"}
              onChange={(e) => set({ room: e.target.value })}
            />
            <datalist id="new-room-list">
              {rooms.map((r) => (
                <option key={r.room} value={r.room} />
              ))}
            </datalist>
          </div>
          <div>
            <label className="label" htmlFor="new-topic">
              topic
            </label>
            <input id="new-topic" type="text" value={draft.topic} onChange={(e) => set({ topic: e.target.value })} />
          </div>
        </div>
        <div className="row">
          <div style={{ flex: "1 1 260px" }}>
            <label className="label" htmlFor="new-reason">
              reason (kept in the provenance log)
            </label>
            <input id="new-reason" type="text" value={draft.reason} onChange={(e) => set({ reason: e.target.value })} />
          </div>
          <div style={{ flex: "1 1 260px" }}>
            <label className="label" htmlFor="new-supersedes">
              supersedes (drawer ids, space or comma separated)
            </label>
            <input id="new-supersedes" type="text" value={draft.supersedes} onChange={(e) => set({ supersedes: e.target.value })} />
          </div>
          <div>
            <label className="label" htmlFor="new-allow-wing">
              may open a new wing
            </label>
            <input
              id="new-allow-wing"
              type="checkbox"
              checked={draft.allow_new_wing}
              onChange={(e) => set({ allow_new_wing: e.target.checked })}
            />
          </div>
          <div>
            <button type="submit" className="primary" disabled={!ready || write.isPending}>
              {write.isPending ? "writing…" : "write drawer"}
            </button>
          </div>
        </div>
      </form>
      <ErrorNote error={info.error} />
      <ErrorNote error={write.error} />
      {write.data && <WriteOutcome store={store} answer={write.data} />}
    </Card>
  );
}
