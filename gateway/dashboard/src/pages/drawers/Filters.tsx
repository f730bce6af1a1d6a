// The drawers list's filters: facet-counted selects (wing, room, type, pin), topic, author, session.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../api/client";
import { listQuery, type Filter } from "./shared";

/** Facet counts under `filter` (one drawer fetched; the counts are what is wanted). Each select
 * asks with its own dimension left out, so its options count what choosing them would give. */
function useFacets(store: string, filter: Filter) {
  return useQuery({
    queryKey: ["drawers", store, "facets", filter],
    queryFn: () =>
      api("get", "/v1/stores/{store}/drawers", {
        path: { store },
        query: { ...listQuery(filter), page_size: 1, include_facets: true },
      }),
    placeholderData: keepPreviousData,
    staleTime: 10_000,
  });
}

function count(value: number | string | undefined): number {
  return Number(value ?? 0);
}

export function Filters({ store, filter, onChange }: { store: string; filter: Filter; onChange: (next: Filter) => void }) {
  const forWing = useFacets(store, { ...filter, wing: undefined, room: undefined }).data?.facets;
  const forRoom = useFacets(store, { ...filter, room: undefined }).data?.facets;
  const forType = useFacets(store, { ...filter, type: undefined }).data?.facets;
  const forPin = useFacets(store, { ...filter, pin: undefined }).data?.facets;
  const wings = (forWing?.wings ?? []).map((w) => ({ value: w.wing ?? "", n: count(w.count) }));
  const rooms = (forRoom?.wings ?? [])
    .filter((w) => !filter.wing || w.wing === filter.wing)
    .flatMap((w) => w.rooms ?? [])
    .map((r) => ({ value: r.room ?? "", n: count(r.count) }));
  const types = (forType?.memory_types ?? []).map((t) => ({ value: t.value ?? "", n: count(t.count) }));
  const pins = (forPin?.pin_statuses ?? []).map((p) => ({ value: p.value ?? "", n: count(p.count) }));
  return (
    <div>
      <div className="row">
        <FacetSelect
          id="drawers-wing"
          label="wing"
          value={filter.wing}
          options={wings}
          onChange={(wing) => onChange({ ...filter, wing, room: undefined })}
        />
        <FacetSelect id="drawers-room" label="room" value={filter.room} options={rooms} onChange={(room) => onChange({ ...filter, room })} />
        <FacetSelect id="drawers-type" label="memory type" value={filter.type} options={types} onChange={(type) => onChange({ ...filter, type })} />
        <FacetSelect id="drawers-pin" label="pin status" value={filter.pin} options={pins} onChange={(pin) => onChange({ ...filter, pin })} />
        <TextFilters key={`${filter.topic ?? ""}|${filter.by ?? ""}`} filter={filter} onChange={onChange} />
      </div>
      {filter.session && (
        <p>
          <span className="label">derived from raw session</span>
          <code>{filter.session}</code>{" "}
          <button type="button" onClick={() => onChange({ ...filter, session: undefined })}>
            clear session filter
          </button>
        </p>
      )}
    </div>
  );
}

function FacetSelect({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string;
  label: string;
  value: string | undefined;
  options: { value: string; n: number }[];
  onChange: (value: string | undefined) => void;
}) {
  const shown = value && !options.some((o) => o.value === value) ? [...options, { value, n: 0 }] : options;
  return (
    <div>
      <label className="label" htmlFor={id}>
        {label}
      </label>
      <select id={id} value={value ?? ""} onChange={(e) => onChange(e.target.value || undefined)}>
        <option value="">all</option>
        {shown.map((o) => (
          <option key={o.value} value={o.value}>
            {o.value} ({o.n})
          </option>
        ))}
      </select>
    </div>
  );
}

function TextFilters({ filter, onChange }: { filter: Filter; onChange: (next: Filter) => void }) {
  const [topic, setTopic] = useState(filter.topic ?? "");
  const [by, setBy] = useState(filter.by ?? "");
  return (
    <form
      className="row"
      onSubmit={(event) => {
        event.preventDefault();
        onChange({ ...filter, topic: topic.trim() || undefined, by: by.trim() || undefined });
      }}
    >
      <div>
        <label className="label" htmlFor="drawers-topic">
          topic
        </label>
        <input id="drawers-topic" type="text" value={topic} onChange={(e) => setTopic(e.target.value)} />
      </div>
      <div>
        <label className="label" htmlFor="drawers-by">
          added by
        </label>
        <input id="drawers-by" type="text" value={by} onChange={(e) => setBy(e.target.value)} />
      </div>
      <div>
        <button type="submit">apply</button>
      </div>
    </form>
  );
}
