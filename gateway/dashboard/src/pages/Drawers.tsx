// A store's drawers, newest first, fifty a page: filtered by wing, room, type, pin status
// (select boxes whose counts come from the API's facets), topic, author or source session;
// with a write token, a form to add one and the write's verdict (warnings, duplicate,
// supersession candidates). This page holds the URL's filter and page; its parts live in
// ./drawers/.
import { useNavigate, useParams, useSearch } from "@tanstack/react-router";
import { useState } from "react";
import { allows, useTier } from "../api/hooks";
import { Card } from "../components/ui";
import { DrawerList } from "./drawers/DrawerList";
import { Filters } from "./drawers/Filters";
import { NewDrawer } from "./drawers/NewDrawer";

// re-exported: it lived here, and other pages may still import it from ./Drawers

export type DrawersParams = {
  wing?: string;
  room?: string;
  type?: string;
  pin?: string; // active | pinned | deprecated
  page?: number; // 1-based; absent: the first page
  topic?: string;
  by?: string; // added_by
  session?: string; // derived from this raw session
};

const PINS = ["active", "pinned", "deprecated"] as const;

export function readDrawersParams(search: Record<string, unknown>): DrawersParams {
  const text = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  const page = Number(search.page);
  const pin = text(search.pin);
  return {
    wing: text(search.wing),
    room: text(search.room),
    type: text(search.type),
    pin: PINS.find((p) => p === pin),
    page: Number.isInteger(page) && page > 1 ? page : undefined,
    topic: text(search.topic),
    by: text(search.by),
    session: text(search.session),
  };
}

export function DrawersPage() {
  const { store } = useParams({ from: "/shell/s/$store/drawers" });
  // one view per store: the page-token stacks and the form belong to the store they came from
  return <DrawersView key={store} store={store} />;
}

function DrawersView({ store }: { store: string }) {
  const params = useSearch({ from: "/shell/s/$store/drawers" });
  const navigate = useNavigate({ from: "/s/$store/drawers" });
  const tier = useTier();
  const [adding, setAdding] = useState(false);
  const { page, ...filter } = params;
  const index = (page ?? 1) - 1;
  const go = (next: DrawersParams) => void navigate({ search: next });
  return (
    <div>
      <Card
        title={`drawers · ${store}`}
        actions={
          allows(tier, "write") && (
            <button type="button" aria-expanded={adding} onClick={() => setAdding(!adding)}>
              {adding ? "close the form" : "new drawer"}
            </button>
          )
        }
      >
        <Filters store={store} filter={filter} onChange={(next) => go(next)} />
      </Card>
      {adding && <NewDrawer store={store} onWritten={() => go(filter)} />}
      <DrawerList store={store} filter={filter} index={index} onPage={(i) => go({ ...filter, page: i > 0 ? i + 1 : undefined })} />
    </div>
  );
}
