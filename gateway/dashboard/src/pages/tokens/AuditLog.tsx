// The audit log (admin): every write and admin action, newest first — who, what, which store,
// which ids, how it ended. Never drawer text (the gateway never records it).
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../api/client";
import { tierName, useStores } from "../../api/hooks";
import { Card, ErrorNote, Loading, when } from "../../components/ui";

const LIMITS = [50, 200, 1000];

export function AuditLog() {
  const stores = useStores();
  const [store, setStore] = useState("");
  const [limit, setLimit] = useState(50);
  const events = useQuery({
    queryKey: ["audit", store, limit],
    queryFn: () => api("get", "/v1/audit", { query: { store, limit } }),
  });
  const names = (stores.data?.stores ?? []).map((s) => s.spec?.name ?? "").filter(Boolean);
  const list = events.data?.events ?? [];
  return (
    <Card
      title="audit log"
      actions={
        <div className="row">
          <div>
            <label className="label" htmlFor="audit-store">
              store
            </label>
            <select id="audit-store" value={store} onChange={(e) => setStore(e.target.value)}>
              <option value="">every store</option>
              {names.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label className="label" htmlFor="audit-limit">
              last
            </label>
            <select id="audit-limit" value={limit} onChange={(e) => setLimit(Number(e.target.value))}>
              {LIMITS.map((n) => (
                <option key={n} value={n}>
                  {n} actions
                </option>
              ))}
            </select>
          </div>
        </div>
      }
    >
      <p className="muted">Every write and admin action of the last 7 days, on every face, refused or not.</p>
      {events.isLoading && <Loading what="the audit log" />}
      <ErrorNote error={events.error} />
      {events.data && !list.length && <p className="muted">No actions recorded in this range.</p>}
      {!!list.length && (
        <table aria-label="audit log">
          <thead>
            <tr>
              <th>when</th>
              <th>token</th>
              <th>tier</th>
              <th>operation</th>
              <th>store</th>
              <th>ids</th>
              <th>outcome</th>
            </tr>
          </thead>
          <tbody>
            {list.map((event, i) => (
              <tr key={`${event.at}-${i}`}>
                <td className="count">{when(event.at)}</td>
                <td>
                  <code>{event.token_id}</code>
                </td>
                <td>{tierName(event.tier)}</td>
                <td>{event.operation}</td>
                <td>{event.store || <span className="muted">—</span>}</td>
                <td className="count">{(event.targets ?? []).join(", ") || "—"}</td>
                <td>{event.outcome === "ok" ? "ok" : <span className="error-inline">{event.outcome}</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}
