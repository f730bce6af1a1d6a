// The stores this token may use, with mode, drawer count and what needs attention; an admin
// creates, edits and deletes them (deleting asks for the store's name).
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { api, type S } from "../api/client";
import { allows, useStores, useTier } from "../api/hooks";
import { Card, ConfirmDialog, ErrorNote, Loading, ModeBadge, when } from "../components/ui";
import { EMPTY_DRAFT, StoreFields, type StoreDraft, defaultsOf, draftOf, profileOf, specOf } from "./stores/StoreForm";

type Info = S<"engram.v1.StoreInfo">;

export function StoresPage() {
  const stores = useStores();
  const admin = allows(useTier(), "admin");
  const [editing, setEditing] = useState<Info | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const list = stores.data?.stores ?? [];
  return (
    <div>
      <Card title="stores">
        {stores.isLoading && <Loading what="stores" />}
        <ErrorNote error={stores.error} />
        {stores.data && !list.length && (
          <p className="muted">{admin ? "No stores yet: create the first one below." : "This token may use no store."}</p>
        )}
        {!!list.length && (
          <StoreTable
            stores={list}
            admin={admin}
            onEdit={(info) => setEditing(info)}
            onDelete={(name) => setDeleting(name)}
          />
        )}
        {!admin && <p className="muted">Creating, changing and deleting stores needs an admin token.</p>}
      </Card>
      {admin && editing && (
        <EditStore key={editing.spec?.name} info={editing} onDone={() => setEditing(null)} />
      )}
      {admin && <CreateStore />}
      {admin && deleting && (
        <DeleteStore
          name={deleting}
          onDone={() => {
            if (editing?.spec?.name === deleting) setEditing(null);
            setDeleting(null);
          }}
        />
      )}
    </div>
  );
}

function StoreTable({
  stores,
  admin,
  onEdit,
  onDelete,
}: {
  stores: Info[];
  admin: boolean;
  onEdit: (info: Info) => void;
  onDelete: (name: string) => void;
}) {
  return (
    <table aria-label="stores">
      <thead>
        <tr>
          <th>name</th>
          <th>mode</th>
          <th className="num">drawers</th>
          <th>state</th>
          <th>description</th>
          <th>created</th>
          {admin && <th>actions</th>}
        </tr>
      </thead>
      <tbody>
        {stores.map((info) => {
          const name = info.spec?.name ?? "";
          return (
            <tr key={name}>
              <td>
                <Link to="/s/$store/search" params={{ store: name }} search={{}}>
                  {name}
                </Link>
              </td>
              <td>
                <ModeBadge mode={info.spec?.deployment_mode} />
                {info.spec?.legacy_authority && <span className="badge">legacy authority</span>}
              </td>
              <td className="num">{String(info.drawer_count ?? 0)}</td>
              <td>
                {info.open === false ? <span className="badge pin-deprecated">closed</span> : <span className="badge">open</span>}
                {info.attention && <p className="notice">attention: {info.attention}</p>}
              </td>
              <td>{info.spec?.description || <span className="muted">—</span>}</td>
              <td className="count">{when(info.created_at)}</td>
              {admin && (
                <td className="row">
                  <button type="button" onClick={() => onEdit(info)}>
                    edit <span className="sr-only">{name}</span>
                  </button>
                  <button type="button" className="danger" onClick={() => onDelete(name)}>
                    delete <span className="sr-only">{name}</span>
                  </button>
                </td>
              )}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function CreateStore() {
  const queries = useQueryClient();
  const [draft, setDraft] = useState<StoreDraft>(EMPTY_DRAFT);
  const create = useMutation({
    mutationFn: (spec: S<"engram.v1.StoreSpec">) => api("post", "/v1/stores", { body: { spec } }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ["stores"] });
      setDraft(EMPTY_DRAFT);
    },
  });
  const created = create.data?.spec?.name;
  return (
    <Card title="create a store">
      <form
        aria-label="create a store"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(specOf(draft));
        }}
      >
        <StoreFields prefix="new-store" draft={draft} onChange={setDraft} editing={false} />
        <div className="row">
          <button type="submit" className="primary" disabled={!draft.name.trim() || create.isPending}>
            create store
          </button>
        </div>
      </form>
      <ErrorNote error={create.error} />
      {created && (
        <p role="status">
          Created <Link to="/s/$store/search" params={{ store: created }} search={{}}>{created}</Link>.
        </p>
      )}
    </Card>
  );
}

function patchOf(draft: StoreDraft, before: StoreDraft): S<"engram.v1.UpdateStoreRequest-without-name"> {
  const profileChanged = JSON.stringify(profileOf(draft)) !== JSON.stringify(profileOf(before));
  const defaults = defaultsOf(draft);
  return {
    deployment_mode: draft.mode,
    legacy_authority: draft.legacy,
    description: draft.description,
    open: draft.open,
    ...(Object.keys(defaults).length ? { defaults } : {}),
    ...(profileChanged ? { authority_profile: profileOf(draft), replace_authority_profile: true } : {}),
  };
}

function EditStore({ info, onDone }: { info: Info; onDone: () => void }) {
  const queries = useQueryClient();
  const name = info.spec?.name ?? "";
  const before = draftOf(info);
  const [draft, setDraft] = useState<StoreDraft>(before);
  const save = useMutation({
    mutationFn: () => api("patch", "/v1/stores/{store}", { path: { store: name }, body: patchOf(draft, before) }),
    onSuccess: async () => {
      await Promise.all([
        queries.invalidateQueries({ queryKey: ["stores"] }),
        queries.invalidateQueries({ queryKey: ["store", name] }),
        queries.invalidateQueries({ queryKey: ["stats", name] }),
      ]);
      onDone();
    },
  });
  const clearsDefaults = (!!before.nResults && !draft.nResults) || (!!before.minScore && !draft.minScore);
  return (
    <Card title={`edit · ${name}`}>
      <form
        aria-label={`edit ${name}`}
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate();
        }}
      >
        <StoreFields prefix="edit-store" draft={draft} onChange={setDraft} editing />
        {clearsDefaults && (
          <p className="notice">A default left empty keeps its current value: the API replaces set fields only.</p>
        )}
        <div className="row">
          <button type="submit" className="primary" disabled={save.isPending}>
            save changes
          </button>
          <button type="button" onClick={onDone}>
            cancel
          </button>
        </div>
      </form>
      <ErrorNote error={save.error} />
    </Card>
  );
}

function DeleteStore({ name, onDone }: { name: string; onDone: () => void }) {
  const queries = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api("delete", "/v1/stores/{store}", { path: { store: name }, query: { confirm: true } }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ["stores"] });
      queries.removeQueries({ queryKey: ["stats", name] });
      onDone();
    },
  });
  return (
    <ConfirmDialog
      title={`delete store ${name}?`}
      confirmLabel="delete store"
      typeToConfirm={name}
      busy={remove.isPending}
      error={remove.error}
      onConfirm={() => remove.mutate()}
      onCancel={onDone}
    >
      <p>
        Every tier's data for <strong>{name}</strong> goes: its drawers, links, raw sessions, files and authoring settings.
        This cannot be undone.
      </p>
    </ConfirmDialog>
  );
}
