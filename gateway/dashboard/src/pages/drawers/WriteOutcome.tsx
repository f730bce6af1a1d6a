// What a drawer write answered (also shown after an edit), with the supersede-a-candidate button.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { api, type S } from "../../api/client";
import { ErrorNote } from "../../components/ui";
import { DrawerRef } from "../links/DrawerRef";

/** What a write answered: the drawer, whether it was a duplicate, the soft warnings, the
 * near-identical drawers it may update (each can be marked superseded by it) and the links made. */
export function WriteOutcome({ store, answer }: { store: string; answer: S<"engram.v1.WriteDrawerResponse"> }) {
  const id = answer.drawer?.id ?? "";
  return (
    <div className="write-outcome" role="status">
      <p>
        {answer.duplicate ? (
          <span className="notice">
            duplicate: an existing drawer was returned instead of a second copy
          </span>
        ) : (
          <span className="label">written</span>
        )}{" "}
        {id && (
          <Link to="/s/$store/drawers/$id" params={{ store, id }}>
            <code>{id}</code>
          </Link>
        )}
      </p>
      {!!answer.warnings?.length && (
        <>
          <span className="label">warnings</span>
          <ul>
            {answer.warnings.map((warning) => (
              <li key={warning} className="notice">
                {warning}
              </li>
            ))}
          </ul>
        </>
      )}
      {!!answer.supersession_candidates?.length && (
        <>
          <span className="label">supersession candidates: close drawers whose claim differs</span>
          <ul>
            {answer.supersession_candidates.map((candidate) => (
              <li key={candidate}>
                <DrawerRef store={store} id={candidate} /> <Supersede store={store} newer={id} older={candidate} />
              </li>
            ))}
          </ul>
        </>
      )}
      {!!answer.links?.length && <p className="muted">supersedes links created: {answer.links.join(", ")}</p>}
    </div>
  );
}

function Supersede({ store, newer, older }: { store: string; newer: string; older: string }) {
  const queries = useQueryClient();
  const link = useMutation({
    mutationFn: () =>
      api("post", "/v1/stores/{store}/links", {
        path: { store },
        body: {
          from_id: newer,
          to_id: older,
          type: "LINK_TYPE_SUPERSEDES",
          reason: "named as a supersession candidate when it was written",
        },
      }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ["drawers", store] });
      void queries.invalidateQueries({ queryKey: ["drawer", store] });
      void queries.invalidateQueries({ queryKey: ["links", store] });
    },
  });
  if (link.data) return <span className="muted">now superseded by the new drawer ({link.data.id})</span>;
  return (
    <>
      <button type="button" disabled={link.isPending || !newer} onClick={() => link.mutate()} aria-label={`the new drawer supersedes it: ${older}`}>
        the new drawer supersedes it
      </button>
      <ErrorNote error={link.error} />
    </>
  );
}
