// Drawers by memory type in the biggest rooms: the stats give each room's total and the store's
// type counts, not both at once, so each of the top rooms (at most 12) is asked for its facets
// with a one-drawer page, and its types are drawn as one stacked bar.
import { useQueries } from "@tanstack/react-query";
import { api, type S } from "../../api/client";
import { ErrorNote, Loading } from "../../components/ui";
import { ChartCard, PALETTE, Svg, ticks } from "./Chart";

const TOP_ROOMS = 12;
const W = 640;
const LEFT = 200;
const RIGHT = 48;
const ROW = 24;
const TOP = 8;
const BOTTOM = 40;

type Room = { wing: string; room: string; total: number };
type Row = Room & { types: Map<string, number> };

function topRooms(stats: S<"engram.v1.StatsResponse">): { shown: Room[]; rest: Room[] } {
  const rooms = (stats.facets?.wings ?? []).flatMap((w) =>
    (w.rooms ?? []).map((r) => ({ wing: w.wing ?? "", room: r.room ?? "", total: Number(r.count ?? 0) })),
  );
  rooms.sort((a, b) => b.total - a.total || a.room.localeCompare(b.room));
  return { shown: rooms.slice(0, TOP_ROOMS), rest: rooms.slice(TOP_ROOMS) };
}

export function TypesByRoomChart({ store, stats }: { store: string; stats: S<"engram.v1.StatsResponse"> }) {
  const { shown, rest } = topRooms(stats);
  const answers = useQueries({
    queries: shown.map((r) => ({
      queryKey: ["room-facets", store, r.wing, r.room],
      queryFn: () =>
        api("get", "/v1/stores/{store}/drawers", {
          path: { store },
          query: { wing: r.wing, room: r.room, page_size: 1, include_facets: true },
        }),
      staleTime: 30_000,
    })),
  });
  const title = "drawers by type per room";
  if (!shown.length) {
    return (
      <ChartCard title={title} summary="No rooms yet: the store holds no drawers.">
        <p className="muted">Rooms appear once drawers are written.</p>
      </ChartCard>
    );
  }
  if (answers.some((a) => a.isLoading)) return <Loading what="room facets" />;
  const error = answers.find((a) => a.error)?.error;
  const rows: Row[] = shown.map((r, i) => ({
    ...r,
    types: new Map((answers[i].data?.facets?.memory_types ?? []).map((f) => [f.value ?? "", Number(f.count ?? 0)])),
  }));
  const order = typeOrder(stats, rows);
  const restDrawers = rest.reduce((sum, r) => sum + r.total, 0);
  const summary =
    `The ${rows.length} biggest room${rows.length === 1 ? "" : "s"} by drawer count, each split by memory type` +
    (rest.length ? `; ${rest.length} smaller rooms (${restDrawers} drawers) are not shown.` : ".");
  return (
    <ChartCard title={title} summary={summary} table={<RoomTable rows={rows} order={order} />}>
      <ErrorNote error={error} />
      <StackedBars rows={rows} order={order} label={summary} />
      <ul className="legend" aria-label="memory types">
        {order.map((type, i) => (
          <li key={type}>
            <svg width="12" height="12" aria-hidden="true">
              <rect width="12" height="12" fill={PALETTE[i % PALETTE.length]} />
            </svg>{" "}
            {type}
          </li>
        ))}
      </ul>
    </ChartCard>
  );
}

/** Types in the store's own order (most drawers first), then any only the rooms name. */
function typeOrder(stats: S<"engram.v1.StatsResponse">, rows: Row[]): string[] {
  const order = (stats.facets?.memory_types ?? []).map((f) => f.value ?? "");
  for (const row of rows) for (const type of row.types.keys()) if (!order.includes(type)) order.push(type);
  return order.filter((type) => rows.some((row) => row.types.get(type)));
}

function StackedBars({ rows, order, label }: { rows: Row[]; order: string[]; label: string }) {
  const max = Math.max(...rows.map((r) => r.total), 1);
  const axis = ticks(max, 5);
  const top = axis[axis.length - 1];
  const x = (v: number) => (v / top) * (W - LEFT - RIGHT);
  const height = TOP + rows.length * ROW + BOTTOM;
  const base = TOP + rows.length * ROW;
  return (
    <Svg label={label} width={W} height={height}>
      {axis.map((t) => (
        <g key={t}>
          <line className="grid" x1={LEFT + x(t)} x2={LEFT + x(t)} y1={TOP} y2={base} />
          <text className="tick" x={LEFT + x(t)} y={base + 14} textAnchor="middle">
            {t}
          </text>
        </g>
      ))}
      <text className="axis-label" x={LEFT + (W - LEFT - RIGHT) / 2} y={height - 4} textAnchor="middle">
        drawers
      </text>
      {rows.map((row, i) => {
        const y = TOP + i * ROW + 4;
        let offset = 0;
        return (
          <g key={`${row.wing}/${row.room}`}>
            <text className="tick" x={LEFT - 6} y={y + 12} textAnchor="end">
              {short(row.room, 30)}
              <title>
                {row.wing} / {row.room}
              </title>
            </text>
            {order.map((type, t) => {
              const count = row.types.get(type) ?? 0;
              if (!count) return null;
              const start = offset;
              offset += count;
              return (
                <rect key={type} x={LEFT + x(start)} y={y} width={Math.max(1, x(count))} height={ROW - 8} fill={PALETTE[t % PALETTE.length]}>
                  <title>
                    {row.room}: {count} {type}
                  </title>
                </rect>
              );
            })}
            <text className="tick" x={LEFT + x(row.total) + 4} y={y + 12}>
              {row.total}
            </text>
          </g>
        );
      })}
      <line className="axis" x1={LEFT} x2={LEFT} y1={TOP} y2={base} />
    </Svg>
  );
}

function short(text: string, n: number): string {
  return text.length > n ? `…${text.slice(text.length - n + 1)}` : text;
}

function RoomTable({ rows, order }: { rows: Row[]; order: string[] }) {
  return (
    <div className="table-scroll">
      <table aria-label="drawers by type per room">
        <thead>
          <tr>
            <th>wing</th>
            <th>room</th>
            {order.map((type) => (
              <th key={type} className="num">
                {type}
              </th>
            ))}
            <th className="num">total</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.wing}/${row.room}`}>
              <td>{row.wing}</td>
              <td>{row.room}</td>
              {order.map((type) => (
                <td key={type} className="num">
                  {row.types.get(type) ?? 0}
                </td>
              ))}
              <td className="num">{row.total}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
