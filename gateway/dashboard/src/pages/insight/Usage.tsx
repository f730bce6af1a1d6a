// The retrieval log's question, day by day: when a search returned drawers, how often was one
// of them recorded as used afterwards? Bars: searches that returned drawers; the filled part:
// those followed by a use.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, type S } from "../../api/client";
import { ErrorNote, Loading } from "../../components/ui";
import { ChartCard, Svg, pct, ticks } from "./Chart";

const RANGES = [7, 30, 90];
const W = 640;
const H = 200;
const LEFT = 40;
const RIGHT = 12;
const TOP = 10;
const BOTTOM = 44;

type Day = S<"engram.v1.UsageDay">;

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function UsageChart({ store }: { store: string }) {
  const [days, setDays] = useState(30);
  const since = isoDay(new Date(Date.now() - (days - 1) * 86_400_000));
  const usage = useQuery({
    queryKey: ["usage", store, since],
    queryFn: () => api("get", "/v1/stores/{store}/usage", { path: { store }, query: { since } }),
  });
  const list = usage.data?.days ?? [];
  const searches = list.reduce((sum, d) => sum + Number(d.searches ?? 0), 0);
  const used = list.reduce((sum, d) => sum + Number(d.searches_with_use ?? 0), 0);
  const title = "searches that led to a used drawer";
  const summary = !usage.data
    ? `Daily, over the last ${days} days.`
    : searches
      ? `Over the last ${days} days, ${used} of ${searches} searches that returned drawers (${pct(Number(usage.data.overall_usage_rate ?? used / searches))}) had one recorded as used afterwards.`
      : `No search returned drawers in the last ${days} days, so there is nothing to measure yet.`;
  const controls = (
    <>
      <label className="sr-only" htmlFor="usage-range">
        period
      </label>
      <select id="usage-range" value={days} onChange={(e) => setDays(Number(e.target.value))}>
        {RANGES.map((n) => (
          <option key={n} value={n}>
            last {n} days
          </option>
        ))}
      </select>
    </>
  );
  return (
    <ChartCard
      title={title}
      summary={summary}
      controls={controls}
      table={searches > 0 ? <UsageTable days={list} /> : undefined}
    >
      {usage.isLoading && <Loading what="retrieval usage" />}
      <ErrorNote error={usage.error} />
      {searches > 0 && <DailyBars days={list} label={summary} />}
      {searches > 0 && (
        <p className="legend">
          <span>▯ outline: searches that returned drawers</span> <span>▮ filled: of those, followed by a recorded use</span>
        </p>
      )}
      {usage.data && !searches && (
        <p className="muted">
          Agents record a use with the retrieval log (record_retrieval) after a search helped them; until searches run, the
          chart stays empty rather than show zeros as a trend.
        </p>
      )}
    </ChartCard>
  );
}

function DailyBars({ days, label }: { days: Day[]; label: string }) {
  const max = Math.max(...days.map((d) => Number(d.searches ?? 0)), 1);
  const axis = ticks(max, 4);
  const top = axis[axis.length - 1];
  const base = H - BOTTOM;
  const y = (v: number) => base - (v / top) * (base - TOP);
  const slot = (W - LEFT - RIGHT) / Math.max(days.length, 1);
  const bar = Math.max(1, slot * 0.7);
  const labelled = new Set([0, Math.floor((days.length - 1) / 2), days.length - 1]);
  return (
    <Svg label={label} width={W} height={H}>
      {axis.map((t) => (
        <g key={t}>
          <line className="grid" x1={LEFT} x2={W - RIGHT} y1={y(t)} y2={y(t)} />
          <text className="tick" x={LEFT - 6} y={y(t) + 4} textAnchor="end">
            {t}
          </text>
        </g>
      ))}
      <text className="axis-label" transform={`translate(10 ${(TOP + base) / 2}) rotate(-90)`} textAnchor="middle">
        searches
      </text>
      {days.map((d, i) => {
        const n = Number(d.searches ?? 0);
        const usedCount = Number(d.searches_with_use ?? 0);
        const left = LEFT + i * slot + (slot - bar) / 2;
        return (
          <g key={d.day}>
            <title>
              {d.day}: {usedCount} of {n} searches followed by a use{n ? ` (${pct(Number(d.usage_rate ?? 0))})` : ""}
            </title>
            {n > 0 && <rect className="bar-total" x={left} y={y(n)} width={bar} height={base - y(n)} />}
            {usedCount > 0 && <rect className="bar-used" x={left} y={y(usedCount)} width={bar} height={base - y(usedCount)} />}
            {labelled.has(i) && (
              <text className="tick" x={left + bar / 2} y={base + 14} textAnchor="middle">
                {d.day?.slice(5)}
              </text>
            )}
          </g>
        );
      })}
      <line className="axis" x1={LEFT} x2={W - RIGHT} y1={base} y2={base} />
      <text className="axis-label" x={LEFT + (W - LEFT - RIGHT) / 2} y={H - 4} textAnchor="middle">
        day (UTC)
      </text>
    </Svg>
  );
}

function UsageTable({ days }: { days: Day[] }) {
  return (
    <table aria-label="retrieval usage by day">
      <thead>
        <tr>
          <th>day</th>
          <th className="num">searches with drawers</th>
          <th className="num">followed by a use</th>
          <th className="num">rate</th>
          <th className="num">uses recorded</th>
        </tr>
      </thead>
      <tbody>
        {days
          .filter((d) => Number(d.searches ?? 0) > 0 || Number(d.retrievals_recorded ?? 0) > 0)
          .map((d) => (
            <tr key={d.day}>
              <td>{d.day}</td>
              <td className="num">{d.searches ?? 0}</td>
              <td className="num">{d.searches_with_use ?? 0}</td>
              <td className="num">{Number(d.searches ?? 0) ? pct(Number(d.usage_rate ?? 0)) : "—"}</td>
              <td className="num">{d.retrievals_recorded ?? 0}</td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}
