// The fields of a store an admin sets: deployment mode, legacy authority, description, search
// defaults, and the authority profile (author → authority tier rows). Used to create and to edit.
import type { S } from "../../api/client";

type Mode = S<"engram.v1.DeploymentMode">;
type Authority = S<"engram.v1.AuthorityTier">;

export type StoreDraft = {
  name: string;
  mode: Mode;
  legacy: boolean;
  description: string;
  nResults: string;
  minScore: string;
  defaultTier: Authority;
  authors: { author: string; tier: Authority }[];
  open: boolean;
};

const MODES: { value: Mode; label: string }[] = [
  { value: "DEPLOYMENT_MODE_DEFAULT", label: "DEFAULT · multi-agent" },
  { value: "DEPLOYMENT_MODE_COMPANION", label: "COMPANION · one user, one companion" },
];
const AUTHORITY: { value: Authority; label: string }[] = [
  { value: "AUTHORITY_TIER_DIRECTIVE", label: "directive (1.6)" },
  { value: "AUTHORITY_TIER_ADVISORY", label: "advisory (1.3)" },
  { value: "AUTHORITY_TIER_EXECUTION", label: "execution (1.1)" },
  { value: "AUTHORITY_TIER_WORKER", label: "worker (1.0)" },
];

export const EMPTY_DRAFT: StoreDraft = {
  name: "",
  mode: "DEPLOYMENT_MODE_DEFAULT",
  legacy: false,
  description: "",
  nResults: "",
  minScore: "",
  defaultTier: "AUTHORITY_TIER_UNSPECIFIED",
  authors: [],
  open: true,
};

export function draftOf(info: S<"engram.v1.StoreInfo">): StoreDraft {
  const spec = info.spec ?? {};
  const profile = spec.authority_profile ?? {};
  return {
    name: spec.name ?? "",
    mode: spec.deployment_mode === "DEPLOYMENT_MODE_COMPANION" ? "DEPLOYMENT_MODE_COMPANION" : "DEPLOYMENT_MODE_DEFAULT",
    legacy: !!spec.legacy_authority,
    description: spec.description ?? "",
    nResults: spec.defaults?.n_results === undefined ? "" : String(spec.defaults.n_results),
    minScore: spec.defaults?.min_score === undefined ? "" : String(spec.defaults.min_score),
    defaultTier: profile.default_tier ?? "AUTHORITY_TIER_UNSPECIFIED",
    authors: Object.entries(profile.tiers_by_author ?? {}).map(([author, tier]) => ({ author, tier })),
    open: info.open ?? true,
  };
}

export function defaultsOf(draft: StoreDraft): S<"engram.v1.StoreDefaults"> {
  return {
    ...(draft.nResults.trim() ? { n_results: Number(draft.nResults) } : {}),
    ...(draft.minScore.trim() ? { min_score: Number(draft.minScore) } : {}),
  };
}

export function profileOf(draft: StoreDraft): S<"engram.v1.AuthorityProfile"> {
  const tiers: Record<string, Authority> = {};
  for (const row of draft.authors) if (row.author.trim()) tiers[row.author.trim()] = row.tier;
  return { tiers_by_author: tiers, default_tier: draft.defaultTier };
}

export function specOf(draft: StoreDraft): S<"engram.v1.StoreSpec"> {
  const profile = profileOf(draft);
  const hasProfile = Object.keys(profile.tiers_by_author ?? {}).length > 0 || draft.defaultTier !== "AUTHORITY_TIER_UNSPECIFIED";
  return {
    name: draft.name.trim(),
    deployment_mode: draft.mode,
    legacy_authority: draft.legacy,
    description: draft.description,
    defaults: defaultsOf(draft),
    ...(hasProfile ? { authority_profile: profile } : {}),
  };
}

export function StoreFields({
  prefix,
  draft,
  onChange,
  editing,
}: {
  prefix: string;
  draft: StoreDraft;
  onChange: (draft: StoreDraft) => void;
  editing: boolean;
}) {
  const set = (patch: Partial<StoreDraft>) => onChange({ ...draft, ...patch });
  return (
    <>
      <div className="row">
        {!editing && (
          <div>
            <label className="label" htmlFor={`${prefix}-name`}>
              name
            </label>
            <input
              id={`${prefix}-name`}
              value={draft.name}
              required
              pattern="[a-z0-9][a-z0-9._\-]{0,62}"
              title="a slug: lowercase letters, digits, dot, dash, underscore"
              aria-describedby={`${prefix}-name-hint`}
              onChange={(e) => set({ name: e.target.value })}
            />
            <span id={`${prefix}-name-hint`} className="count">
              lowercase slug, e.g. team-notes
            </span>
          </div>
        )}
        <div>
          <label className="label" htmlFor={`${prefix}-mode`}>
            deployment mode
          </label>
          <select id={`${prefix}-mode`} value={draft.mode} onChange={(e) => set({ mode: e.target.value as Mode })}>
            {MODES.map((m) => (
              <option key={m.value} value={m.value}>
                {m.label}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label className="label" htmlFor={`${prefix}-legacy`}>
            legacy authority
          </label>
          <input id={`${prefix}-legacy`} type="checkbox" checked={draft.legacy} onChange={(e) => set({ legacy: e.target.checked })} />
        </div>
        {editing && (
          <div>
            <label className="label" htmlFor={`${prefix}-open`}>
              open
            </label>
            <input id={`${prefix}-open`} type="checkbox" checked={draft.open} onChange={(e) => set({ open: e.target.checked })} />
          </div>
        )}
        <div>
          <label className="label" htmlFor={`${prefix}-n`}>
            default n_results
          </label>
          <input
            id={`${prefix}-n`}
            type="number"
            min={1}
            max={100}
            style={{ width: "7em", minWidth: 0 }}
            value={draft.nResults}
            placeholder="mode's"
            onChange={(e) => set({ nResults: e.target.value })}
          />
        </div>
        <div>
          <label className="label" htmlFor={`${prefix}-min`}>
            default min_score
          </label>
          <input
            id={`${prefix}-min`}
            type="number"
            step={0.05}
            style={{ width: "7em", minWidth: 0 }}
            value={draft.minScore}
            placeholder="mode's"
            onChange={(e) => set({ minScore: e.target.value })}
          />
        </div>
      </div>
      <label className="label" htmlFor={`${prefix}-description`}>
        description
      </label>
      <textarea
        id={`${prefix}-description`}
        rows={2}
        value={draft.description}
        onChange={(e) => set({ description: e.target.value })}
      />
      <AuthorityRows prefix={prefix} draft={draft} onChange={onChange} />
    </>
  );
}

function AuthorityRows({ prefix, draft, onChange }: { prefix: string; draft: StoreDraft; onChange: (draft: StoreDraft) => void }) {
  const setRow = (index: number, patch: Partial<StoreDraft["authors"][number]>) =>
    onChange({ ...draft, authors: draft.authors.map((row, i) => (i === index ? { ...row, ...patch } : row)) });
  return (
    <fieldset className="checks">
      <legend className="label">authority profile (optional): added_by → authority tier</legend>
      <div className="row">
        <div>
          <label className="label" htmlFor={`${prefix}-default-tier`}>
            unknown authors
          </label>
          <AuthoritySelect
            id={`${prefix}-default-tier`}
            value={draft.defaultTier}
            unset="worker (the default)"
            onChange={(tier) => onChange({ ...draft, defaultTier: tier })}
          />
        </div>
      </div>
      {draft.authors.map((row, i) => (
        <div className="row" key={i}>
          <div>
            <label className="label" htmlFor={`${prefix}-author-${i}`}>
              author {i + 1}
            </label>
            <input id={`${prefix}-author-${i}`} value={row.author} onChange={(e) => setRow(i, { author: e.target.value })} />
          </div>
          <div>
            <label className="label" htmlFor={`${prefix}-author-tier-${i}`}>
              tier of author {i + 1}
            </label>
            <AuthoritySelect id={`${prefix}-author-tier-${i}`} value={row.tier} onChange={(tier) => setRow(i, { tier })} />
          </div>
          <div>
            <button type="button" onClick={() => onChange({ ...draft, authors: draft.authors.filter((_, j) => j !== i) })}>
              remove author {i + 1}
            </button>
          </div>
        </div>
      ))}
      <button
        type="button"
        onClick={() => onChange({ ...draft, authors: [...draft.authors, { author: "", tier: "AUTHORITY_TIER_DIRECTIVE" }] })}
      >
        add author
      </button>
    </fieldset>
  );
}

function AuthoritySelect({
  id,
  value,
  unset,
  onChange,
}: {
  id: string;
  value: Authority;
  unset?: string;
  onChange: (tier: Authority) => void;
}) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value as Authority)}>
      {unset && <option value="AUTHORITY_TIER_UNSPECIFIED">{unset}</option>}
      {AUTHORITY.map((a) => (
        <option key={a.value} value={a.value}>
          {a.label}
        </option>
      ))}
    </select>
  );
}
