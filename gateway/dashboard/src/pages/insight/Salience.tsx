// The salience distribution: drawers per bin of effective salience (the stats' histogram,
// 20 equal bins over [0, 1]) with the median, p90 and mean marked on it.
import type { S } from "../../api/client";
import { ChartCard, Svg, fmt, ticks } from "./Chart";

const W = 640;
const H = 180;
const LEFT = 44;
const RIGHT = 16;
const TOP = 16;
const BOTTOM = 40;

type Figures = Record<"min" | "median" | "p90" | "max" | "mean", number>;

export function SalienceChart({ stats }: { stats: S<"engram.v1.StatsResponse"> }) {
  const drawers = Number(stats.drawers ?? 0);
  const s = stats.salience ?? {};
  const bins = (s.histogram ?? []).map(Number);
  const figures: Figures = {
    min: Number(s.min ?? 0),
    median: Number(s.median ?? 0),
    p90: Number(s.p90 ?? 0),
    max: Number(s.max ?? 0),
    mean: Number(s.mean ?? 0),
  };
  const title = "salience distribution";
  if (!drawers || !bins.length) {
    return (
      <ChartCard title={title} summary="No drawers yet, so no salience to picture.">
        <p className="muted">Salience appears once the store holds drawers.</p>
      </ChartCard>
    );
  }
  const summary =
    `Effective salience of ${drawers} drawers now: min ${fmt(figures.min)}, median ${fmt(figures.median)}, ` +
    `p90 ${fmt(figures.p90)}, max ${fmt(figures.max)}, mean ${fmt(figures.mean)}.`;
  const counts = ticks(Math.max(1, ...bins), 4);
  const highest = counts[counts.length - 1];
  const width = (W - LEFT - RIGHT) / bins.length;
  const x = (v: number) => LEFT + v * (W - LEFT - RIGHT);
  const y = (n: number) => H - BOTTOM - (n / highest) * (H - BOTTOM - TOP);
  const flat = figures.max - figures.min < 1e-3;
  const marks = [
    { name: "median", value: figures.median, dash: "" },
    { name: "p90", value: figures.p90, dash: "4 3" },
    { name: "mean", value: figures.mean, dash: "1 3" },
  ];
  return (
    <ChartCard title={title} summary={summary} table={<SalienceTable bins={bins} figures={figures} />}>
      <Svg label={summary} width={W} height={H}>
        {counts.map((n) => (
          <g key={n}>
            <line className="axis" x1={LEFT - 4} x2={W - RIGHT} y1={y(n)} y2={y(n)} opacity={n ? 0.3 : 1} />
            <text className="tick" x={LEFT - 8} y={y(n) + 4} textAnchor="end">
              {n}
            </text>
          </g>
        ))}
        {bins.map((n, i) => (
          <rect key={i} className="box" x={LEFT + i * width + 1} y={y(n)} width={Math.max(1, width - 2)} height={H - BOTTOM - y(n)}>
            <title>{`${fmt(i / bins.length, 2)}–${fmt((i + 1) / bins.length, 2)}: ${n} drawers`}</title>
          </rect>
        ))}
        {[0, 0.25, 0.5, 0.75, 1].map((t) => (
          <text key={t} className="tick" x={x(t)} y={H - BOTTOM + 16} textAnchor="middle">
            {t}
          </text>
        ))}
        {marks.map((mark) => (
          <line
            key={mark.name}
            className="median"
            x1={x(mark.value)}
            x2={x(mark.value)}
            y1={TOP - 6}
            y2={H - BOTTOM}
            strokeDasharray={mark.dash || undefined}
          >
            <title>{`${mark.name} ${fmt(mark.value)}`}</title>
          </line>
        ))}
        <text className="axis-label" x={(LEFT + W - RIGHT) / 2} y={H - 4} textAnchor="middle">
          effective salience (decayed, now) · bars: drawers per bin
        </text>
      </Svg>
      <p className="legend">
        <span>│ solid: median</span> <span>╎ dashed: p90</span> <span>┆ dotted: mean</span>
      </p>
      {flat && <p className="muted">Every drawer has about the same salience: nothing has been retrieved or decayed apart yet.</p>}
    </ChartCard>
  );
}

function SalienceTable({ bins, figures }: { bins: number[]; figures: Figures }) {
  return (
    <>
      <table aria-label="salience figures">
        <thead>
          <tr>
            <th>figure</th>
            <th className="num">salience</th>
          </tr>
        </thead>
        <tbody>
          {(["min", "median", "p90", "max", "mean"] as const).map((name) => (
            <tr key={name}>
              <td>{name}</td>
              <td className="num">{fmt(figures[name], 4)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <table aria-label="drawers per salience bin">
        <thead>
          <tr>
            <th>salience</th>
            <th className="num">drawers</th>
          </tr>
        </thead>
        <tbody>
          {bins.map((n, i) => (
            <tr key={i}>
              <td>
                {fmt(i / bins.length, 2)}–{fmt((i + 1) / bins.length, 2)}
              </td>
              <td className="num">{n}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
