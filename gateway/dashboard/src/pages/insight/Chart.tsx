// What every insight chart shares: a titled frame with a one-line summary that is also the
// picture's accessible name, the picture (inline SVG), and the same numbers as a table.
import type { ReactNode } from "react";
import { Card } from "../../components/ui";

export function ChartCard({
  title,
  summary,
  controls,
  children,
  table,
}: {
  title: string;
  summary: string;
  controls?: ReactNode;
  children: ReactNode;
  table?: ReactNode;
}) {
  return (
    <Card title={title} actions={controls}>
      <p className="muted">{summary}</p>
      {children}
      {table && (
        <details className="chart-table">
          <summary>the numbers as a table</summary>
          {table}
        </details>
      )}
    </Card>
  );
}

/** An SVG picture whose text alternative is `label` (the table below carries the detail). */
export function Svg({ label, width, height, children }: { label: string; width: number; height: number; children: ReactNode }) {
  return (
    <svg className="chart" role="img" aria-label={label} viewBox={`0 0 ${width} ${height}`} width="100%" preserveAspectRatio="xMinYMin meet">
      {children}
    </svg>
  );
}

/** Round tick values from 0 to at least `max` (about `count` of them). */
export function ticks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = 0; v < max + step / 2; v += step) out.push(Number(v.toPrecision(12)));
  if (out[out.length - 1] < max) out.push(out[out.length - 1] + step);
  return out;
}

export function fmt(value: number, digits = 3): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "—";
}

export function pct(value: number): string {
  return `${(value * 100).toFixed(0)}%`;
}

// Categorical fills, distinguishable on the dark panel; meaning never rests on colour alone
// (every segment has a <title>, a legend entry and a table row).
export const PALETTE = [
  "#58c4ff",
  "#f2c14e",
  "#3fd17a",
  "#d2a8ff",
  "#ff7b72",
  "#7ee0d0",
  "#ffa657",
  "#a5b4fc",
  "#e3b341",
  "#f778ba",
  "#8ddb8c",
  "#c9d1d9",
  "#79c0ff",
  "#db6d28",
];
