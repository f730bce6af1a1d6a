// The drawer's provenance log: who did what to it, when, why, and what changed.
import { useQuery } from "@tanstack/react-query";
import { api } from "../../api/client";
import { Card, ErrorNote, Loading, when } from "../../components/ui";

export function Provenance({ store, id }: { store: string; id: string }) {
  const log = useQuery({
    queryKey: ["drawer", store, id, "provenance"],
    queryFn: () => api("get", "/v1/stores/{store}/drawers/{id}/provenance", { path: { store, id } }),
  });
  const entries = log.data?.entries ?? [];
  return (
    <Card title="provenance">
      {log.isLoading && <Loading what="the provenance log" />}
      <ErrorNote error={log.error} />
      {log.data && entries.length === 0 && <p className="muted">no entries</p>}
      {entries.length > 0 && (
        <table aria-label="provenance log">
          <thead>
            <tr>
              <th>when</th>
              <th>actor</th>
              <th>action</th>
              <th>reason</th>
              <th>changes</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry, i) => (
              <tr key={`${entry.at}-${i}`}>
                <td className="count">{when(entry.at)}</td>
                <td>{entry.actor}</td>
                <td>
                  <span className="badge">{entry.action}</span>
                </td>
                <td>{entry.reason || <span className="muted">—</span>}</td>
                <td>
                  {Object.entries(entry.changes ?? {}).map(([field, change]) => (
                    <div key={field}>
                      <span className="count">{field}</span> {change}
                    </div>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}
