// The landing page: the stores this token can use, each with its mode and size.
import { Link } from "@tanstack/react-router";
import { useStores } from "../api/hooks";
import { Card, ErrorNote, Loading, ModeBadge } from "../components/ui";

export function HomePage() {
  const stores = useStores();
  if (stores.isLoading) return <Loading what="stores" />;
  const list = stores.data?.stores ?? [];
  return (
    <Card title="stores">
      <ErrorNote error={stores.error} />
      {list.length === 0 && (
        <p>
          No store yet. <Link to="/stores">Create one</Link> (admin).
        </p>
      )}
      <ul className="store-list">
        {list.map((s) => (
          <li key={s.spec?.name}>
            <Link to="/s/$store/search" params={{ store: s.spec?.name ?? "" }}>
              {s.spec?.name}
            </Link>{" "}
            <ModeBadge mode={s.spec?.deployment_mode} /> <span className="count">{s.drawer_count ?? 0} drawers</span>
            {s.attention && <p className="error">{s.attention}</p>}
          </li>
        ))}
      </ul>
    </Card>
  );
}
