// The write-policy tab: which token tiers may write drawers, pin them and open new wings, and
// which memory types a tier may not author. Everyone reads it; an admin changes it.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type S } from "../../api/client";
import { allows, useStats, useTier } from "../../api/hooks";
import { Card, ErrorNote, Loading } from "../../components/ui";

type Policy = S<"engram.v1.WritePolicy">;
type Tier = S<"engram.v1.CallerTier">;
type Capability = "writers" | "pinners" | "wing_creators";

const TIERS: { value: Tier; name: string }[] = [
  { value: "CALLER_TIER_READ", name: "read" },
  { value: "CALLER_TIER_WRITE", name: "write" },
  { value: "CALLER_TIER_ADMIN", name: "admin" },
];
const CAPABILITIES: { key: Capability; meaning: string }[] = [
  { key: "writers", meaning: "may write drawers" },
  { key: "pinners", meaning: "may pin drawers" },
  { key: "wing_creators", meaning: "may open a new wing without the explicit flag" },
];

export function WritePolicyTab({ store }: { store: string }) {
  const policy = useQuery({
    queryKey: ["write-policy", store],
    queryFn: () => api("get", "/v1/stores/{store}/authoring/write-policy", { path: { store } }),
  });
  const admin = allows(useTier(), "admin");
  return (
    <Card title="write policy">
      {policy.isLoading && <Loading what="write policy" />}
      <ErrorNote error={policy.error} />
      {policy.data && <PolicyForm store={store} policy={policy.data} editable={admin} />}
      {policy.data && !admin && <p className="muted">Changing the write policy needs an admin token.</p>}
    </Card>
  );
}

function PolicyForm({ store, policy, editable }: { store: string; policy: Policy; editable: boolean }) {
  const queries = useQueryClient();
  const stats = useStats(store);
  const [draft, setDraft] = useState<Policy>(policy);
  const save = useMutation({
    mutationFn: () => api("put", "/v1/stores/{store}/authoring/write-policy", { path: { store }, body: { policy: draft } }),
    onSuccess: (saved) => {
      queries.setQueryData(["write-policy", store], saved);
      setDraft(saved);
    },
  });
  const forbidden = draft.forbidden_types ?? {};
  const library = stats.data?.search_defaults?.memory_types ?? [];
  const listed = Object.values(forbidden).flatMap((list) => list.memory_types ?? []);
  const types = [...new Set([...library, ...listed])];
  const changed = JSON.stringify(draft) !== JSON.stringify(policy);

  const toggleTier = (key: Capability, tier: Tier) => {
    const current = new Set(draft[key] ?? []);
    if (current.has(tier)) current.delete(tier);
    else current.add(tier);
    setDraft({ ...draft, [key]: TIERS.map((t) => t.value).filter((t) => current.has(t)) });
  };
  const toggleType = (tier: string, type: string) => {
    const current = new Set(forbidden[tier]?.memory_types ?? []);
    if (current.has(type)) current.delete(type);
    else current.add(type);
    const next = { ...forbidden, [tier]: { memory_types: [...current].sort() } };
    if (!current.size) delete next[tier];
    setDraft({ ...draft, forbidden_types: next });
  };

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <table aria-label="what each tier may do">
        <thead>
          <tr>
            <th>capability</th>
            {TIERS.map((t) => (
              <th key={t.value}>{t.name}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {CAPABILITIES.map((c) => (
            <tr key={c.key}>
              <td>
                <code>{c.key}</code> <span className="muted">{c.meaning}</span>
              </td>
              {TIERS.map((t) => {
                const on = (draft[c.key] ?? []).includes(t.value);
                const id = `policy-${c.key}-${t.name}`;
                return (
                  <td key={t.value}>
                    {editable ? (
                      <>
                        <input id={id} type="checkbox" checked={on} onChange={() => toggleTier(c.key, t.value)} />{" "}
                        <label htmlFor={id}>
                          {on ? "yes" : "no"}
                          <span className="sr-only">
                            : {t.name} {c.meaning}
                          </span>
                        </label>
                      </>
                    ) : (
                      <span>{on ? "yes" : "no"}</span>
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <h3>memory types a tier may not author</h3>
      {TIERS.filter((t) => t.name !== "read").map((t) => (
        <ForbiddenTypes
          key={t.name}
          tier={t.name}
          types={types}
          forbidden={forbidden[t.name]?.memory_types ?? []}
          editable={editable}
          onToggle={(type) => toggleType(t.name, type)}
        />
      ))}
      {editable && (
        <div className="row">
          <button type="submit" className="primary" disabled={!changed || save.isPending}>
            save write policy
          </button>
          <button type="button" disabled={!changed} onClick={() => setDraft(policy)}>
            discard changes
          </button>
        </div>
      )}
      <ErrorNote error={save.error} />
      {save.isSuccess && !changed && <p className="muted">Saved: the policy applies to the next write.</p>}
    </form>
  );
}

function ForbiddenTypes({
  tier,
  types,
  forbidden,
  editable,
  onToggle,
}: {
  tier: string;
  types: string[];
  forbidden: string[];
  editable: boolean;
  onToggle: (type: string) => void;
}) {
  if (!editable) {
    return (
      <p>
        <span className="label">{tier}</span>
        {forbidden.length ? forbidden.join(", ") : <span className="muted">none forbidden</span>}
      </p>
    );
  }
  return (
    <fieldset className="checks">
      <legend className="label">{tier} may not author</legend>
      {types.map((type) => {
        const id = `forbid-${tier}-${type}`;
        return (
          <span key={type}>
            <input id={id} type="checkbox" checked={forbidden.includes(type)} onChange={() => onToggle(type)} />{" "}
            <label htmlFor={id}>{type}</label>
          </span>
        );
      })}
      {!types.length && <span className="muted">the store's type library is not available</span>}
    </fieldset>
  );
}
