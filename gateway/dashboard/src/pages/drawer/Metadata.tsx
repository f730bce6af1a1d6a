// The drawer's metadata sidebar, with the salience decay curve it is on.
import type { S } from "../../api/client";
import { Card, PinBadge, when } from "../../components/ui";

type Drawer = S<"engram.v1.Drawer">;

export function MetaSidebar({ drawer }: { drawer: Drawer }) {
  const attributes = Object.entries(drawer.attributes ?? {});
  return (
    <aside aria-label="metadata">
      <Card title="metadata">
        <dl className="meta">
          <dt>type</dt>
          <dd>{drawer.memory_type}</dd>
          <dt>pin status</dt>
          <dd>
            <PinBadge pin={drawer.pin_status} />
          </dd>
          <dt>salience (stored base)</dt>
          <dd>{Number(drawer.salience ?? 0).toFixed(3)}</dd>
          <dt>effective salience (now)</dt>
          <dd>{Number(drawer.effective_salience ?? 0).toFixed(3)}</dd>
          <dt>last activity</dt>
          <dd>{when(drawer.last_activity_at)}</dd>
        </dl>
        <DecayCurve drawer={drawer} />
        <dl className="meta">
          <dt>wing</dt>
          <dd>{drawer.wing}</dd>
          <dt>room</dt>
          <dd>{drawer.room}</dd>
          <dt>topic</dt>
          <dd>{drawer.topic || "—"}</dd>
          <dt>confidence</dt>
          <dd>{drawer.confidence === undefined || drawer.confidence === null ? "type default" : Number(drawer.confidence).toFixed(2)}</dd>
          <dt>added by</dt>
          <dd>{drawer.added_by || "—"}</dd>
          <dt>created</dt>
          <dd>{when(drawer.created_at)}</dd>
          <dt>updated</dt>
          <dd>{when(drawer.updated_at)}</dd>
          <dt>retrievals</dt>
          <dd>{drawer.retrieval_count ?? 0}</dd>
          <dt>content hash</dt>
          <dd>
            <code title={drawer.content_hash}>{(drawer.content_hash ?? "").slice(0, 16)}…</code>
          </dd>
        </dl>
        <span className="label">attributes</span>
        {attributes.length === 0 ? (
          <p className="muted">none</p>
        ) : (
          <table aria-label="attributes">
            <thead>
              <tr>
                <th>key</th>
                <th>value</th>
              </tr>
            </thead>
            <tbody>
              {attributes.map(([key, value]) => (
                <tr key={key}>
                  <td>{key}</td>
                  <td>{value}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </aside>
  );
}

// The retrieval tier's rule (services/retrieval/core/salience.py): effective =
// clamp(base × (1 − 0.025)^weeks since last activity, 0.1, 1.0); pinned drawers keep their base;
// a recorded retrieval stores min(1.0, effective + 0.1) as the new base and restarts the clock.
const DECAY_PER_WEEK = 0.025;
const FLOOR = 0.1;
const CAP = 1.0;
const BUMP = 0.1;
const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

function decayed(base: number, weeks: number, pinned: boolean): number {
  const value = pinned ? base : base * (1 - DECAY_PER_WEEK) ** Math.max(0, weeks);
  return Math.min(CAP, Math.max(FLOOR, value));
}

function DecayCurve({ drawer }: { drawer: Drawer }) {
  const base = Number(drawer.salience ?? 0);
  const pinned = drawer.pin_status === "PIN_STATUS_PINNED";
  const anchor = Date.parse(drawer.last_activity_at || drawer.created_at || "");
  if (Number.isNaN(anchor)) return <p className="muted">no last activity recorded: no decay to draw</p>;
  const now = Math.max(0, (Date.now() - anchor) / WEEK_MS);
  const horizon = Math.max(26, Math.ceil((now + 12) / 4) * 4);
  const [left, right, top, bottom] = [30, 250, 8, 96];
  const x = (weeks: number) => left + ((right - left) * weeks) / horizon;
  const y = (value: number) => bottom - (bottom - top) * value;
  const steps = 64;
  const path = Array.from({ length: steps + 1 }, (_, i) => {
    const weeks = (horizon * i) / steps;
    return `${i ? "L" : "M"}${x(weeks).toFixed(1)},${y(decayed(base, weeks, pinned)).toFixed(1)}`;
  }).join(" ");
  const valueNow = decayed(base, now, pinned);
  const later = decayed(base, now + 12, pinned);
  const summary = pinned
    ? `Pinned: salience stays at ${base.toFixed(2)}; pinned drawers do not decay.`
    : `Salience ${base.toFixed(2)} at the last activity, decaying 2.5 % a week (compounding, floor 0.10): ` +
      `${valueNow.toFixed(3)} now, ${later.toFixed(3)} in 12 more weeks if no retrieval is recorded.`;
  return (
    <figure className="decay">
      <svg viewBox="0 0 260 122" role="img" aria-label={summary} width="100%">
        <line className="decay-axis" x1={left} y1={top} x2={left} y2={bottom} />
        <line className="decay-axis" x1={left} y1={bottom} x2={right} y2={bottom} />
        <line className="decay-floor" x1={left} y1={y(FLOOR)} x2={right} y2={y(FLOOR)} />
        <text x={left - 4} y={y(1) + 3} textAnchor="end">
          1.0
        </text>
        <text x={left - 4} y={y(0.5) + 3} textAnchor="end">
          0.5
        </text>
        <text x={left - 4} y={y(FLOOR) + 3} textAnchor="end">
          0.1
        </text>
        <path className="decay-line" d={path} />
        <line className="decay-now" x1={x(now)} y1={top} x2={x(now)} y2={bottom} />
        <circle className="decay-dot" cx={x(now)} cy={y(valueNow)} r={3} />
        <text x={Math.min(x(now) + 4, right - 18)} y={top + 8}>
          now
        </text>
        <text x={left} y={bottom + 12}>
          0
        </text>
        <text x={right} y={bottom + 12} textAnchor="end">
          {horizon} weeks
        </text>
        <text x={(left + right) / 2} y={bottom + 24} textAnchor="middle">
          weeks since last activity
        </text>
      </svg>
      <figcaption className="muted">
        {summary} Projection from the retrieval tier's rule, assuming nothing else happens; a recorded retrieval sets
        the base to the effective value + {BUMP} (at most 1.0) and restarts the clock.
      </figcaption>
    </figure>
  );
}
