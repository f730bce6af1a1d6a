// Pictures of one store an operator would rather look at than read: how salience is spread,
// what kinds of drawers fill its biggest rooms, and whether searches lead to drawers being used.
// Each is inline SVG with a summary sentence and the numbers as a table.
import { useParams } from "@tanstack/react-router";
import { useStats } from "../api/hooks";
import { ErrorNote, Loading } from "../components/ui";
import { SalienceChart } from "./insight/Salience";
import { TypesByRoomChart } from "./insight/TypesByRoom";
import { UsageChart } from "./insight/Usage";

export function InsightPage() {
  const { store } = useParams({ from: "/shell/s/$store/insight" });
  const stats = useStats(store);
  return (
    <div className="insight">
      <h2 className="page-title">insight · {store}</h2>
      {stats.isLoading && <Loading what="stats" />}
      <ErrorNote error={stats.error} />
      {stats.data && (
        <>
          <p className="muted">
            {String(stats.data.drawers ?? 0)} drawers · {String(stats.data.retrievals_recorded ?? 0)} uses recorded in the
            retrieval log
          </p>
          <SalienceChart stats={stats.data} />
          <TypesByRoomChart store={store} stats={stats.data} />
        </>
      )}
      <UsageChart store={store} />
    </div>
  );
}
