// A drawer's links as a table, with end and delete; one copy, used by the links and drawer pages.
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../api/client";
import { allows, useTier } from "../../api/hooks";
import { ErrorNote, when } from "../../components/ui";
import { DrawerRef } from "./DrawerRef";
import { linkState, linkTypeName, useLinksChanged, type DrawerLink } from "./shared";

/** A drawer's links, each read from `focus`'s side, with end (write) and delete (admin). */
export function LinksTable({ store, links, focus }: { store: string; links: DrawerLink[]; focus?: string }) {
  const tier = useTier();
  const canEnd = allows(tier, "write");
  const canDelete = allows(tier, "admin");
  if (!links.length) return <p className="muted">no links</p>;
  return (
    <div className="table-scroll">
      <table aria-label="links">
        <thead>
          <tr>
            <th>link</th>
            {focus && <th>direction</th>}
            <th>valid from</th>
            <th>state</th>
            <th>reason</th>
            <th>asserted by</th>
            <th>evidence</th>
            {canEnd && <th>actions</th>}
          </tr>
        </thead>
        <tbody>
          {links.map((link) => (
            <tr key={link.id}>
              <td>
                <DrawerRef store={store} id={link.from_id ?? ""} self={link.from_id === focus} />{" "}
                <span className="badge">{linkTypeName(link.type)}</span>{" "}
                <DrawerRef store={store} id={link.to_id ?? ""} self={link.to_id === focus} />
                <div className="count">{link.id}</div>
              </td>
              {focus && <td>{link.from_id === focus ? "outgoing" : "incoming"}</td>}
              <td>{when(link.valid_from)}</td>
              <td>{linkState(link)}</td>
              <td>{link.reason || <span className="muted">—</span>}</td>
              <td>{link.asserted_by || <span className="muted">—</span>}</td>
              <td>
                {(link.evidence_ids ?? []).length === 0 && <span className="muted">—</span>}
                {(link.evidence_ids ?? []).map((id) => (
                  <span key={id}>
                    <DrawerRef store={store} id={id} />{" "}
                  </span>
                ))}
              </td>
              {canEnd && (
                <td>
                  <LinkActions store={store} link={link} canDelete={canDelete} />
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function LinkActions({ store, link, canDelete }: { store: string; link: DrawerLink; canDelete: boolean }) {
  const changed = useLinksChanged(store);
  const [confirming, setConfirming] = useState(false);
  const id = link.id ?? "";
  const end = useMutation({
    mutationFn: () => api("post", "/v1/stores/{store}/links/{id}:end", { path: { store, id }, body: {} }),
    onSuccess: changed,
  });
  const remove = useMutation({
    mutationFn: () => api("delete", "/v1/stores/{store}/links/{id}", { path: { store, id } }),
    onSuccess: changed,
  });
  const ended = !!link.valid_to && Date.parse(link.valid_to) <= Date.now();
  return (
    <div className="link-actions">
      {!ended && (
        <button type="button" disabled={end.isPending} onClick={() => end.mutate()} aria-label={`end now: link ${id}`}>
          end now
        </button>
      )}
      {canDelete && !confirming && (
        <button type="button" className="danger" onClick={() => setConfirming(true)} aria-label={`delete link ${id}`}>
          delete
        </button>
      )}
      {canDelete && confirming && (
        <>
          <button
            type="button"
            className="danger"
            disabled={remove.isPending}
            onClick={() => remove.mutate()}
            aria-label={`confirm delete of link ${id}`}
          >
            confirm delete
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            cancel
          </button>
        </>
      )}
      <ErrorNote error={end.error ?? remove.error} />
    </div>
  );
}
