// A drawer reference: a drawer id as a link to its page, shared by every page that names drawers.
import { Link } from "@tanstack/react-router";

/** A drawer id as a link to its page (shortened; the full id in its title). */
export function DrawerRef({ store, id, self }: { store: string; id: string; self?: boolean }) {
  if (self) return <strong title={id}>this drawer</strong>;
  return (
    <Link to="/s/$store/drawers/$id" params={{ store, id }} title={id}>
      <code>{id.length > 14 ? `${id.slice(0, 12)}…` : id}</code>
    </Link>
  );
}
