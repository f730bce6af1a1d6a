// The salience distribution from the five figures the stats give (min, median, p90, max,
// mean): not a histogram, so drawn as a box-plot-like bar, every mark named.
import type { S } from "../../api/client";
import { ChartCard, Svg, fmt, ticks } from "./Chart";

const W = 640;
const H = 120;
const LEFT = 24;
const RIGHT = 24;
const MID = 48;

export function SalienceChart({ stats }: { stats: S<"engram.v1.StatsResponse"> }) {
  const drawers = Number(stats.drawers ?? 0);
  const s = stats.salience ?? {};
  const figures = {
    min: Number(s.min ?? 0),
    median: Number(s.median ?? 0),
    p90: Number(s.p90 ?? 0),
    max: Number(s.max ?? 0),
    mean: Number(s.mean ?? 0),
  };
  const title = "salience distribution";
  if (!drawers || !stats.salience) {
    return (
      <ChartCard title={title} summary="No drawers yet, so no salience to picture.">
        <p className="muted">Salience appears once the store holds drawers.</p>
      </ChartCard>
    );
  }
  const summary =
    `Effective salience of ${drawers} drawers now: min ${fmt(figures.min)}, median ${fmt(figures.median)}, ` +
    `p90 ${fmt(figures.p90)}, max ${fmt(figures.max)}, mean ${fmt(figures.mean)}.`;
  const axis = ticks(Math.max(1, figures.max), 4);
  const top = axis[axis.length - 1];
  const x = (v: number) => LEFT + (Math.max(0, v) / top) * (W - LEFT - RIGHT);
  const flat = figures.max - figures.min < 1e-3;
  return (
    <ChartCard title={title} summary={summary} table={<SalienceTable figures={figures} />}>
      <Svg label={summary} width={W} height={H}>
        <line className="axis" x1={LEFT} x2={W - RIGHT} y1={H - 34} y2={H - 34} />
        {axis.map((t) => (
          <g key={t}>
            <line className="axis" x1={x(t)} x2={x(t)} y1={H - 34} y2={H - 30} />
            <text className="tick" x={x(t)} y={H - 18} textAnchor="middle">
              {t}
            </text>
          </g>
        ))}
        <text className="axis-label" x={W / 2} y={H - 2} textAnchor="middle">
          effective salience (decayed, now)
        </text>
        <line className="whisker" x1={x(figures.min)} x2={x(figures.max)} y1={MID} y2={MID} />
        <line className="whisker" x1={x(figures.min)} x2={x(figures.min)} y1={MID - 10} y2={MID + 10} />
        <line className="whisker" x1={x(figures.max)} x2={x(figures.max)} y1={MID - 10} y2={MID + 10} />
        <rect className="box" x={x(figures.median)} y={MID - 12} width={Math.max(2, x(figures.p90) - x(figures.median))} height={24}>
          <title>median to p90</title>
        </rect>
        <line className="median" x1={x(figures.median)} x2={x(figures.median)} y1={MID - 16} y2={MID + 16} />
        <path
          className="mean"
          d={`M ${x(figures.mean)} ${MID - 20} l 5 -6 l -5 -6 l -5 6 z`}
        >
          <title>mean {fmt(figures.mean)}</title>
        </path>
      </Svg>
      <p className="legend">
        <span>├─┤ whiskers: min to max</span> <span>▭ box: median to p90</span> <span>│ thick line: median</span>{" "}
        <span>◆ diamond: mean</span>
      </p>
      {flat && <p className="muted">Every drawer has about the same salience: nothing has been retrieved or decayed apart yet.</p>}
    </ChartCard>
  );
}

function SalienceTable({ figures }: { figures: Record<"min" | "median" | "p90" | "max" | "mean", number> }) {
  return (
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
  );
}
