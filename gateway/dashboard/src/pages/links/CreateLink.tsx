// The form that creates a link between two drawers (write tier), and what it created.
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../api/client";
import { Card, ErrorNote } from "../../components/ui";
import { DrawerRef } from "./DrawerRef";
import { LINK_TYPES, instant, linkTypeName, useLinksChanged, type LinkType } from "./shared";

export function CreateLink({ store, from }: { store: string; from: string }) {
  const changed = useLinksChanged(store);
  const [draft, setDraft] = useState({
    from,
    to: "",
    type: "LINK_TYPE_RELATES_TO" as LinkType,
    reason: "",
    evidence: "",
    validFrom: "",
  });
  const create = useMutation({
    mutationFn: () =>
      api("post", "/v1/stores/{store}/links", {
        path: { store },
        body: {
          from_id: draft.from.trim(),
          to_id: draft.to.trim(),
          type: draft.type,
          reason: draft.reason.trim(),
          evidence_ids: draft.evidence.split(/[\s,]+/).filter(Boolean),
          valid_from: instant(draft.validFrom),
        },
      }),
    onSuccess: changed,
  });
  return (
    <Card title="create a link">
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate();
        }}
      >
        <div>
          <label className="label" htmlFor="new-link-from">
            from (the drawer that says it)
          </label>
          <input id="new-link-from" type="text" required value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
        </div>
        <div>
          <label className="label" htmlFor="new-link-type">
            type
          </label>
          <select id="new-link-type" value={draft.type} onChange={(e) => setDraft({ ...draft, type: e.target.value as LinkType })}>
            {LINK_TYPES.map((t) => (
              <option key={t.value} value={t.value}>
                {t.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label className="label" htmlFor="new-link-to">
            to
          </label>
          <input id="new-link-to" type="text" required value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        </div>
        <div>
          <button type="button" onClick={() => setDraft({ ...draft, from: draft.to, to: draft.from })}>
            swap ends
          </button>
        </div>
        <div style={{ flex: "1 1 240px" }}>
          <label className="label" htmlFor="new-link-reason">
            reason
          </label>
          <input id="new-link-reason" type="text" value={draft.reason} onChange={(e) => setDraft({ ...draft, reason: e.target.value })} />
        </div>
        <div>
          <label className="label" htmlFor="new-link-evidence">
            evidence drawer ids (space or comma separated)
          </label>
          <input id="new-link-evidence" type="text" value={draft.evidence} onChange={(e) => setDraft({ ...draft, evidence: e.target.value })} />
        </div>
        <div>
          <label className="label" htmlFor="new-link-from-time">
            valid from (local time; empty: now)
          </label>
          <input
            id="new-link-from-time"
            type="datetime-local"
            value={draft.validFrom}
            onChange={(e) => setDraft({ ...draft, validFrom: e.target.value })}
          />
        </div>
        <div>
          <button type="submit" className="primary" disabled={create.isPending || !draft.from.trim() || !draft.to.trim()}>
            create link
          </button>
        </div>
      </form>
      <p className="muted">
        Reads from → to: “B supersedes A” runs from B to A, and search then withholds A outside history intents.
      </p>
      <ErrorNote error={create.error} />
      {create.data && (
        <p className="notice" role="status">
          created {create.data.id}: <DrawerRef store={store} id={create.data.from_id ?? ""} />{" "}
          {linkTypeName(create.data.type)} <DrawerRef store={store} id={create.data.to_id ?? ""} />
        </p>
      )}
    </Card>
  );
}
