// A drawer's actions, as the tier allows: record a retrieval, pin / unpin / deprecate, edit, delete.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { api, type S } from "../../api/client";
import { allows, tierName, useTier, type TierName } from "../../api/hooks";
import { Card, ErrorNote } from "../../components/ui";
import { WriteOutcome } from "../drawers/WriteOutcome";

type Drawer = S<"engram.v1.Drawer">;
type PinStatus = S<"engram.v1.PinStatus">;

function useDrawerChanged(store: string, id: string) {
  const queries = useQueryClient();
  return () => {
    void queries.invalidateQueries({ queryKey: ["drawer", store, id] });
    void queries.invalidateQueries({ queryKey: ["drawers", store] });
    void queries.invalidateQueries({ queryKey: ["stats", store] });
    void queries.invalidateQueries({ queryKey: ["links", store] });
  };
}

export function Actions({ store, drawer }: { store: string; drawer: Drawer }) {
  const tier = useTier();
  const canWrite = allows(tier, "write");
  return (
    <Card title="actions">
      <RecordRetrieval store={store} id={drawer.id ?? ""} />
      {canWrite && (
        <>
          <PinActions store={store} drawer={drawer} tier={tier} />
          <EditDrawer store={store} drawer={drawer} />
          <DeleteDrawer store={store} id={drawer.id ?? ""} />
        </>
      )}
    </Card>
  );
}

function RecordRetrieval({ store, id }: { store: string; id: string }) {
  const changed = useDrawerChanged(store, id);
  const [query, setQuery] = useState("");
  const record = useMutation({
    mutationFn: () =>
      api("post", "/v1/stores/{store}/drawers/{id}:record-retrieval", { path: { store, id }, body: { query: query.trim() } }),
    onSuccess: changed,
  });
  const after = record.data?.drawers?.[0];
  return (
    <section aria-label="record a retrieval" className="action">
      <h3>record a retrieval</h3>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          record.mutate();
        }}
      >
        <div style={{ flex: "1 1 260px" }}>
          <label className="label" htmlFor="retrieval-query">
            query it answered (optional, for the retrieval log)
          </label>
          <input id="retrieval-query" type="text" value={query} onChange={(e) => setQuery(e.target.value)} />
        </div>
        <div>
          <button type="submit" disabled={record.isPending}>
            record retrieval
          </button>
        </div>
      </form>
      <ErrorNote error={record.error} />
      {after && (
        <p className="muted" role="status">
          recorded: salience now {Number(after.salience ?? 0).toFixed(3)}, {after.retrieval_count ?? 0} retrievals
        </p>
      )}
      {record.data?.refused?.map((refusal) => (
        <p key={refusal.drawer_id} className="notice" role="status">
          not counted: {refusal.reason}. A use counts once per search that returned this drawer to
          your token in the last 24 hours.
        </p>
      ))}
    </section>
  );
}

function PinActions({ store, drawer, tier }: { store: string; drawer: Drawer; tier: TierName }) {
  const id = drawer.id ?? "";
  const changed = useDrawerChanged(store, id);
  const [reason, setReason] = useState("");
  const policy = useQuery({
    queryKey: ["write-policy", store],
    queryFn: () => api("get", "/v1/stores/{store}/authoring/write-policy", { path: { store } }),
    staleTime: 60_000,
  });
  const pinners = (policy.data?.pinners ?? []).map((p) => tierName(p));
  // Unknown policy (not loaded or refused): offer everything and let the server decide.
  const mayPin = !policy.data || pinners.includes(tier);
  const update = useMutation({
    mutationFn: (pin_status: PinStatus) =>
      api("patch", "/v1/stores/{store}/drawers/{id}", { path: { store, id }, body: { pin_status, reason: reason.trim() } }),
    onSuccess: changed,
  });
  const status = drawer.pin_status === "PIN_STATUS_UNSPECIFIED" ? "PIN_STATUS_ACTIVE" : drawer.pin_status;
  const pinned = status === "PIN_STATUS_PINNED";
  const choices: { to: PinStatus; label: string; show: boolean }[] = [
    { to: "PIN_STATUS_PINNED", label: "pin", show: !pinned && mayPin },
    { to: "PIN_STATUS_ACTIVE", label: pinned ? "unpin" : "restore to active", show: status !== "PIN_STATUS_ACTIVE" && (!pinned || mayPin) },
    { to: "PIN_STATUS_DEPRECATED", label: "deprecate", show: status !== "PIN_STATUS_DEPRECATED" && (!pinned || mayPin) },
  ];
  return (
    <section aria-label="pin status" className="action">
      <h3>pin status</h3>
      <form className="row" onSubmit={(event) => event.preventDefault()}>
        <div style={{ flex: "1 1 260px" }}>
          <label className="label" htmlFor="pin-reason">
            reason (kept in the provenance log)
          </label>
          <input id="pin-reason" type="text" value={reason} onChange={(e) => setReason(e.target.value)} />
        </div>
        {choices
          .filter((c) => c.show)
          .map((choice) => (
            <div key={choice.to}>
              <button
                type="button"
                className={choice.to === "PIN_STATUS_DEPRECATED" ? "danger" : undefined}
                disabled={update.isPending}
                onClick={() => update.mutate(choice.to)}
              >
                {choice.label}
              </button>
            </div>
          ))}
      </form>
      {!mayPin && (
        <p className="muted">
          This store's write policy lets only {pinners.join(", ") || "no tier"} pin{pinned ? " or change a pinned drawer" : ""}.
        </p>
      )}
      <ErrorNote error={update.error} />
    </section>
  );
}

function editDraft(drawer: Drawer) {
  return {
    content: drawer.content ?? "",
    wing: drawer.wing ?? "",
    room: drawer.room ?? "",
    topic: drawer.topic ?? "",
    reason: "",
    allowNewWing: false,
  };
}

function EditDrawer({ store, drawer }: { store: string; drawer: Drawer }) {
  const id = drawer.id ?? "";
  const changed = useDrawerChanged(store, id);
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState(() => editDraft(drawer));
  const [seen, setSeen] = useState(drawer.updated_at);
  if (seen !== drawer.updated_at) {
    // the drawer changed (this edit or another action): start again from what it says now
    setSeen(drawer.updated_at);
    setDraft(editDraft(drawer));
  }
  const body = {
    ...(draft.content !== drawer.content ? { content: draft.content } : {}),
    ...(draft.wing !== drawer.wing ? { wing: draft.wing.trim() } : {}),
    ...(draft.room !== drawer.room ? { room: draft.room.trim() } : {}),
    ...(draft.topic !== (drawer.topic ?? "") ? { topic: draft.topic.trim() } : {}),
  };
  const dirty = Object.keys(body).length > 0;
  const save = useMutation({
    mutationFn: () =>
      api("patch", "/v1/stores/{store}/drawers/{id}", {
        path: { store, id },
        body: { ...body, reason: draft.reason.trim(), allow_new_wing: draft.allowNewWing },
      }),
    onSuccess: changed,
  });
  return (
    <section aria-label="edit" className="action">
      <h3>
        edit{" "}
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "close the editor" : "open the editor"}
        </button>
      </h3>
      {open && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            save.mutate();
          }}
        >
          <label className="label" htmlFor="edit-content">
            content (a change is re-embedded)
          </label>
          <textarea id="edit-content" rows={4} value={draft.content} onChange={(e) => setDraft({ ...draft, content: e.target.value })} />
          <div className="row">
            <div>
              <label className="label" htmlFor="edit-wing">
                wing
              </label>
              <input id="edit-wing" type="text" value={draft.wing} onChange={(e) => setDraft({ ...draft, wing: e.target.value })} />
            </div>
            <div>
              <label className="label" htmlFor="edit-room">
                room (wing/name)
              </label>
              <input id="edit-room" type="text" value={draft.room} onChange={(e) => setDraft({ ...draft, room: e.target.value })} />
            </div>
            <div>
              <label className="label" htmlFor="edit-topic">
                topic
              </label>
              <input id="edit-topic" type="text" value={draft.topic} onChange={(e) => setDraft({ ...draft, topic: e.target.value })} />
            </div>
            <div>
              <label className="label" htmlFor="edit-allow-wing">
                may open a new wing
              </label>
              <input
                id="edit-allow-wing"
                type="checkbox"
                checked={draft.allowNewWing}
                onChange={(e) => setDraft({ ...draft, allowNewWing: e.target.checked })}
              />
            </div>
          </div>
          <div className="row">
            <div style={{ flex: "1 1 320px" }}>
              <label className="label" htmlFor="edit-reason">
                reason (required; kept in the provenance log)
              </label>
              <input
                id="edit-reason"
                type="text"
                required
                value={draft.reason}
                onChange={(e) => setDraft({ ...draft, reason: e.target.value })}
              />
            </div>
            <div>
              <button type="submit" className="primary" disabled={!dirty || !draft.reason.trim() || save.isPending}>
                save changes
              </button>
            </div>
          </div>
          {!dirty && <p className="muted">nothing changed yet</p>}
        </form>
      )}
      <ErrorNote error={save.error} />
      {save.data && <WriteOutcome store={store} answer={save.data} />}
    </section>
  );
}

function DeleteDrawer({ store, id }: { store: string; id: string }) {
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  const [reason, setReason] = useState("");
  const remove = useMutation({
    mutationFn: () => api("delete", "/v1/stores/{store}/drawers/{id}", { path: { store, id }, query: { reason: reason.trim() } }),
    onSuccess: async () => {
      await navigate({ to: "/s/$store/drawers", params: { store } });
      queries.removeQueries({ queryKey: ["drawer", store, id] });
      void queries.invalidateQueries({ queryKey: ["drawers", store] });
      void queries.invalidateQueries({ queryKey: ["stats", store] });
      void queries.invalidateQueries({ queryKey: ["links", store] });
    },
  });
  return (
    <section aria-label="delete" className="action">
      <h3>delete</h3>
      {!confirming ? (
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          delete this drawer…
        </button>
      ) : (
        <form
          className="row"
          onSubmit={(event) => {
            event.preventDefault();
            remove.mutate();
          }}
        >
          <div style={{ flex: "1 1 320px" }}>
            <label className="label" htmlFor="delete-reason">
              reason (required; the provenance log keeps it)
            </label>
            <input id="delete-reason" type="text" required value={reason} onChange={(e) => setReason(e.target.value)} />
          </div>
          <div>
            <button type="submit" className="danger" disabled={!reason.trim() || remove.isPending}>
              delete for good
            </button>
          </div>
          <div>
            <button type="button" onClick={() => setConfirming(false)}>
              cancel
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={remove.error} />
    </section>
  );
}
