// API tokens (admin): who may call, at which tier, on which stores. A new token is shown once,
// here, and never again (only its hash is stored); revoking one refuses it at once.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type S } from "../api/client";
import { tierName, useStores, useTier, useWhoAmI } from "../api/hooks";
import { Card, ConfirmDialog, ErrorNote, Loading, when } from "../components/ui";
import { AuditLog } from "./tokens/AuditLog";

type Token = S<"engram.v1.TokenInfo">;
type Tier = S<"engram.v1.CallerTier">;

const TIERS: { value: Tier; label: string }[] = [
  { value: "CALLER_TIER_READ", label: "read · search and browse" },
  { value: "CALLER_TIER_WRITE", label: "write · also add and change drawers, ingest" },
  { value: "CALLER_TIER_ADMIN", label: "admin · everything, stores and tokens too" },
];

export function TokensPage() {
  const tier = useTier();
  const who = useWhoAmI();
  if (who.isLoading) return <Loading what="your token" />;
  if (tier !== "admin") {
    return (
      <Card title="tokens">
        <p>
          Tokens are managed by an admin. This token is a <strong>{tier}</strong> token: it can use the stores it was given
          but cannot list, create or revoke tokens. Ask an operator with an admin token for a new one.
        </p>
      </Card>
    );
  }
  return <TokenAdmin />;
}

function TokenAdmin() {
  const tokens = useQuery({ queryKey: ["tokens"], queryFn: () => api("get", "/v1/tokens") });
  const [revoking, setRevoking] = useState<Token | null>(null);
  const queries = useQueryClient();
  // A new secret for the same grant; the previous one keeps working for an hour (the default
  // grace), so whoever holds it can switch first.
  const rotate = useMutation({
    mutationFn: (token: Token) => api("post", "/v1/tokens/{id}:rotate", { path: { id: token.id ?? "" }, body: {} }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ["tokens"] }),
  });
  const list = tokens.data?.tokens ?? [];
  return (
    <div>
      <CreateToken />
      <Card title="tokens">
        {tokens.isLoading && <Loading what="tokens" />}
        <ErrorNote error={tokens.error} />
        {tokens.data && !list.length && <p className="muted">No tokens.</p>}
        {!!list.length && <TokenTable tokens={list} onRevoke={setRevoking} onRotate={(t) => rotate.mutate(t)} />}
        <ErrorNote error={rotate.error} />
        {rotate.data?.token && <NewToken answer={rotate.data} onDismiss={() => rotate.reset()} />}
      </Card>
      {revoking && <RevokeToken token={revoking} onDone={() => setRevoking(null)} />}
      <AuditLog />
    </div>
  );
}

function nameOf(token: Token): string {
  return token.label || token.id || "";
}

function TokenTable({
  tokens,
  onRevoke,
  onRotate,
}: {
  tokens: Token[];
  onRevoke: (token: Token) => void;
  onRotate: (token: Token) => void;
}) {
  const me = useWhoAmI().data?.id;
  return (
    <table aria-label="tokens">
      <thead>
        <tr>
          <th>id</th>
          <th>tier</th>
          <th>stores</th>
          <th>label</th>
          <th>created</th>
          <th>last used</th>
          <th>expires</th>
          <th>actions</th>
        </tr>
      </thead>
      <tbody>
        {tokens.map((token) => {
          const tier = tierName(token.tier);
          return (
            <tr key={token.id}>
              <td>
                <code>{token.id}</code>{" "}
                {token.id === me && <span className="badge">this token</span>}
              </td>
              <td>
                <span className="tier-badge" data-tier={tier}>
                  {tier}
                </span>
              </td>
              <td>{token.stores?.length ? token.stores.join(", ") : <span className="muted">all stores</span>}</td>
              <td>{token.label || <span className="muted">—</span>}</td>
              <td className="count">{when(token.created_at)}</td>
              <td className="count">{token.last_used_at ? when(token.last_used_at) : "never"}</td>
              <td className="count">
                {token.expires_at ? when(token.expires_at) : "never"}
                {token.previous_valid_until && (
                  <div className="muted">previous secret until {when(token.previous_valid_until)}</div>
                )}
              </td>
              <td>
                <button type="button" onClick={() => onRotate(token)}>
                  rotate<span className="sr-only"> {nameOf(token)}</span>
                </button>{" "}
                <button type="button" className="danger" onClick={() => onRevoke(token)}>
                  revoke<span className="sr-only"> {nameOf(token)}</span>
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function CreateToken() {
  const queries = useQueryClient();
  const stores = useStores();
  const [tier, setTier] = useState<Tier>("CALLER_TIER_READ");
  const [picked, setPicked] = useState<string[]>([]);
  const [label, setLabel] = useState("");
  const [expires, setExpires] = useState("");
  const create = useMutation({
    mutationFn: (body: S<"engram.v1.CreateTokenRequest">) => api("post", "/v1/tokens", { body }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ["tokens"] });
      setLabel("");
      setExpires("");
      setPicked([]);
    },
  });
  const names = (stores.data?.stores ?? []).map((s) => s.spec?.name ?? "").filter(Boolean);
  const toggle = (name: string) => setPicked(picked.includes(name) ? picked.filter((n) => n !== name) : [...picked, name]);
  return (
    <Card title="create a token">
      <form
        aria-label="create a token"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate({
            tier,
            stores: picked,
            label: label.trim(),
            ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
          });
        }}
      >
        <div className="row">
          <div>
            <label className="label" htmlFor="token-tier">
              tier
            </label>
            <select id="token-tier" value={tier} onChange={(e) => setTier(e.target.value as Tier)}>
              {TIERS.map((t) => (
                <option key={t.value} value={t.value}>
                  {t.label}
                </option>
              ))}
            </select>
          </div>
          <div style={{ flex: "1 1 240px" }}>
            <label className="label" htmlFor="token-label">
              label
            </label>
            <input id="token-label" value={label} placeholder="e.g. ci-agent" onChange={(e) => setLabel(e.target.value)} />
          </div>
          <div>
            <label className="label" htmlFor="token-expires">
              expires (optional, local time)
            </label>
            <input id="token-expires" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
          </div>
        </div>
        <fieldset className="checks">
          <legend className="label">stores (none ticked: all stores)</legend>
          {names.map((name) => (
            <span key={name}>
              <input id={`token-store-${name}`} type="checkbox" checked={picked.includes(name)} onChange={() => toggle(name)} />{" "}
              <label htmlFor={`token-store-${name}`}>{name}</label>
            </span>
          ))}
          {!names.length && <span className="muted">no stores yet: the token will reach every store</span>}
        </fieldset>
        <div className="row">
          <button type="submit" className="primary" disabled={create.isPending}>
            create token
          </button>
          <span className="muted">
            {picked.length ? `reaches ${picked.length} store${picked.length === 1 ? "" : "s"}` : "reaches every store"}
          </span>
        </div>
      </form>
      <ErrorNote error={create.error} />
      {create.data?.token && <NewToken answer={create.data} onDismiss={() => create.reset()} />}
    </Card>
  );
}

function NewToken({ answer, onDismiss }: { answer: S<"engram.v1.CreateTokenResponse">; onDismiss: () => void }) {
  const [copied, setCopied] = useState<"" | "copied" | "failed">("");
  const token = answer.token ?? "";
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token);
      setCopied("copied");
    } catch {
      setCopied("failed");
    }
  };
  return (
    <section className="secret" aria-labelledby="new-token-title">
      <h3 id="new-token-title">new {tierName(answer.info?.tier)} token · {nameOf(answer.info ?? {})}</h3>
      <p className="muted">
        {answer.info?.stores?.length ? `reaches ${answer.info.stores.join(", ")}` : "reaches every store"} · id{" "}
        <code>{answer.info?.id}</code>
      </p>
      <p className="notice">Copy it now: it will not be shown again. Only its hash is stored.</p>
      <label className="label" htmlFor="new-token">
        token
      </label>
      <input id="new-token" className="secret-value" readOnly value={token} onFocus={(e) => e.target.select()} />
      <div className="row">
        <button type="button" className="primary" onClick={() => void copy()}>
          copy token
        </button>
        <button type="button" onClick={onDismiss}>
          I have stored it
        </button>
        <span role="status" className="muted">
          {copied === "copied" ? "copied to the clipboard" : copied === "failed" ? "copy failed: select the text and copy it" : ""}
        </span>
      </div>
    </section>
  );
}

function RevokeToken({ token, onDone }: { token: Token; onDone: () => void }) {
  const queries = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => api("delete", "/v1/tokens/{id}", { path: { id: token.id ?? "" } }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ["tokens"] });
      onDone();
    },
  });
  return (
    <ConfirmDialog
      title={`revoke token ${nameOf(token)}?`}
      confirmLabel="revoke token"
      busy={revoke.isPending}
      error={revoke.error}
      onConfirm={() => revoke.mutate()}
      onCancel={onDone}
    >
      <p>
        Every agent using <code>{token.id}</code> ({tierName(token.tier)}) is refused from its next call. This cannot be
        undone: a new token would have to be handed out.
      </p>
    </ConfirmDialog>
  );
}
