export type DrawersParams = { wing?: string; room?: string; type?: string; pin?: string; page?: number };

export function readDrawersParams(search: Record<string, unknown>): DrawersParams {
  const text = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  const page = Number(search.page);
  return {
    wing: text(search.wing),
    room: text(search.room),
    type: text(search.type),
    pin: text(search.pin),
    page: Number.isInteger(page) && page > 0 ? page : undefined,
  };
}

export function DrawersPage() {
  return <p>building</p>;
}
