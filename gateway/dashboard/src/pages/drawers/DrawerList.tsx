// One page of a store's drawers under a filter, walked by page tokens, and the table of its drawers.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { api, type S } from "../../api/client";
import { Card, ErrorNote, Highlighted, Loading, Pager, PinBadge, when } from "../../components/ui";
import { listQuery, type Filter } from "./shared";

const PAGE_SIZE = 50;

/** One page of drawers. Page tokens are opaque and handed out one page at a time, so the
 * tokens seen are kept per filter (index = page number − 1): previous/next walk that stack. */
export function DrawerList({
  store,
  filter,
  index,
  onPage,
}: {
  store: string;
  filter: Filter;
  index: number;
  onPage: (index: number) => void;
}) {
  const filterKey = JSON.stringify(filter);
  const [stacks, setStacks] = useState<Record<string, string[]>>({});
  const tokens = stacks[filterKey] ?? [""];
  const token = tokens[index];
  const list = useQuery({
    queryKey: ["drawers", store, "list", filter, token ?? null],
    queryFn: () =>
      api("get", "/v1/stores/{store}/drawers", {
        path: { store },
        query: { ...listQuery(filter), page_size: PAGE_SIZE, page_token: token || undefined },
      }),
    enabled: token !== undefined,
    placeholderData: keepPreviousData,
  });
  const current = list.data && !list.isPlaceholderData ? list.data : undefined;
  const next = current?.page?.next_page_token ?? "";
  useEffect(() => {
    if (!next) return;
    setStacks((all) => {
      const stack = [...(all[filterKey] ?? [""])];
      if (stack[index + 1] === next) return all;
      stack[index + 1] = next;
      return { ...all, [filterKey]: stack };
    });
  }, [filterKey, index, next]);
  const drawers = list.data?.drawers ?? [];
  const total = list.data?.page?.total;
  return (
    <Card title={total === undefined ? "drawers" : `drawers · ${total} match`}>
      {token === undefined && (
        <div className="notice" role="status">
          This tab has not walked to page {index + 1} of this list yet: page tokens are handed out one page at a
          time.{" "}
          <button type="button" onClick={() => onPage(0)}>
            go to the first page
          </button>
        </div>
      )}
      {list.isLoading && <Loading what="drawers" />}
      <ErrorNote error={list.error} />
      {list.data && drawers.length === 0 && <p className="muted">no drawer matches these filters</p>}
      {drawers.length > 0 && <DrawerTable store={store} drawers={drawers} stale={list.isPlaceholderData} />}
      <Pager page={index} hasNext={!!next} total={total} onPage={onPage} />
    </Card>
  );
}

function DrawerTable({ store, drawers, stale }: { store: string; drawers: S<"engram.v1.Drawer">[]; stale: boolean }) {
  return (
    <table aria-label="drawers" aria-busy={stale} className={stale ? "stale" : undefined}>
      <thead>
        <tr>
          <th>type</th>
          <th>pin</th>
          <th>content</th>
          <th>wing / room</th>
          <th className="num" title="salience decayed to now">
            eff. salience
          </th>
          <th className="num">retrievals</th>
          <th>created</th>
          <th>open</th>
        </tr>
      </thead>
      <tbody>
        {drawers.map((drawer) => (
          <tr key={drawer.id}>
            <td>
              <span className="badge">{drawer.memory_type}</span>
            </td>
            <td>
              <PinBadge pin={drawer.pin_status} />
            </td>
            <td className="drawer-content">
              <Highlighted content={drawer.content ?? ""} phrase={drawer.signature} />
              {drawer.topic && <div className="count">topic {drawer.topic}</div>}
            </td>
            <td>
              {drawer.wing}
              <br />
              <span className="count">{drawer.room}</span>
            </td>
            <td className="num">{Number(drawer.effective_salience ?? 0).toFixed(3)}</td>
            <td className="num">{drawer.retrieval_count ?? 0}</td>
            <td className="count nowrap">{when(drawer.created_at).slice(0, 10)}</td>
            <td>
              <Link to="/s/$store/drawers/$id" params={{ store, id: drawer.id ?? "" }} aria-label={`open drawer ${drawer.id}`}>
                open
              </Link>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
