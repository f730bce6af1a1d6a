// The provider tab: which invoker composes this store's drawers (model, reasoning effort, base
// URL; keys are never shown, only whether one is configured), changed by an admin, and a
// smoke test: one call to the provider with the active prompt on a built-in probe session.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type S } from "../../api/client";
import { allows, useTier } from "../../api/hooks";
import { Card, ErrorNote, Loading } from "../../components/ui";
import { DraftList } from "./Drafts";

type Config = S<"engram.v1.ProviderConfig">;

// The invokers and efforts authoring.proto documents for ProviderConfig (the server checks them).
const INVOKERS = [
  { value: "extractive", note: "offline, deterministic; no key" },
  { value: "anthropic", note: "Anthropic API; needs its key on the server" },
  { value: "openai", note: "OpenAI-compatible API; needs its key on the server" },
  { value: "claude_code", note: "the Claude Code CLI on the authoring host" },
  { value: "codex", note: "the Codex CLI on the authoring host" },
];
const EFFORTS = ["", "low", "medium", "high"];
const NEEDS_KEY = new Set(["anthropic", "openai"]);

export function ProviderTab({ store }: { store: string }) {
  const config = useQuery({
    queryKey: ["provider", store],
    queryFn: () => api("get", "/v1/stores/{store}/authoring/provider", { path: { store } }),
  });
  const admin = allows(useTier(), "admin");
  return (
    <>
      <Card title="provider">
        {config.isLoading && <Loading what="provider" />}
        <ErrorNote error={config.error} />
        {config.data && <ProviderSummary config={config.data} />}
        {config.data && admin && <ProviderForm store={store} config={config.data} />}
        {config.data && !admin && <p className="muted">Changing the provider needs an admin token.</p>}
      </Card>
      <ProviderSmokeTest store={store} />
    </>
  );
}

function ProviderSummary({ config }: { config: Config }) {
  const invoker = config.invoker || "extractive";
  return (
    <dl className="meta">
      <dt>invoker</dt>
      <dd>
        <code>{invoker}</code> <span className="muted">{INVOKERS.find((i) => i.value === invoker)?.note}</span>
      </dd>
      <dt>model</dt>
      <dd>{config.model ? <code>{config.model}</code> : <span className="muted">the invoker's default</span>}</dd>
      <dt>reasoning effort</dt>
      <dd>{config.reasoning_effort || <span className="muted">the model's default</span>}</dd>
      <dt>base URL</dt>
      <dd>{config.base_url ? <code>{config.base_url}</code> : <span className="muted">the SDK's default</span>}</dd>
      <dt>API key</dt>
      <dd>
        {!NEEDS_KEY.has(invoker)
          ? "not needed by this invoker"
          : config.api_key_configured
            ? "configured on the server (never shown)"
            : "NOT configured on the server: compose will fail until it is set"}
      </dd>
    </dl>
  );
}

/** The fields an admin sets (api_key_configured is read-only). */
function editable(config: Config): Config {
  return {
    invoker: config.invoker || "extractive",
    model: config.model ?? "",
    reasoning_effort: config.reasoning_effort ?? "",
    base_url: config.base_url ?? "",
  };
}

function ProviderForm({ store, config }: { store: string; config: Config }) {
  const queries = useQueryClient();
  const [draft, setDraft] = useState<Config>(editable(config));
  const save = useMutation({
    mutationFn: () => api("put", "/v1/stores/{store}/authoring/provider", { path: { store }, body: { config: draft } }),
    onSuccess: (saved) => {
      queries.setQueryData(["provider", store], saved);
      setDraft(editable(saved));
    },
  });
  return (
    <form
      className="row"
      aria-label="change the provider"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <div>
        <label className="label" htmlFor="provider-invoker">
          invoker
        </label>
        <select id="provider-invoker" value={draft.invoker} onChange={(e) => setDraft({ ...draft, invoker: e.target.value })}>
          {INVOKERS.map((i) => (
            <option key={i.value} value={i.value}>
              {i.value}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label className="label" htmlFor="provider-model">
          model (empty: default)
        </label>
        <input id="provider-model" value={draft.model} onChange={(e) => setDraft({ ...draft, model: e.target.value })} />
      </div>
      <div>
        <label className="label" htmlFor="provider-effort">
          reasoning effort
        </label>
        <select
          id="provider-effort"
          value={draft.reasoning_effort}
          onChange={(e) => setDraft({ ...draft, reasoning_effort: e.target.value })}
        >
          {EFFORTS.map((effort) => (
            <option key={effort} value={effort}>
              {effort || "model default"}
            </option>
          ))}
        </select>
      </div>
      <div style={{ flex: "1 1 260px" }}>
        <label className="label" htmlFor="provider-url">
          base URL (empty: SDK default)
        </label>
        <input
          id="provider-url"
          type="url"
          value={draft.base_url}
          onChange={(e) => setDraft({ ...draft, base_url: e.target.value })}
        />
      </div>
      <div>
        <button type="submit" className="primary" disabled={save.isPending}>
          save provider
        </button>
      </div>
      <div style={{ flexBasis: "100%" }}>
        <ErrorNote error={save.error} />
        {save.isSuccess && <p className="muted">Saved. Run the provider test to check it answers.</p>}
      </div>
    </form>
  );
}

function ProviderSmokeTest({ store }: { store: string }) {
  const canWrite = allows(useTier(), "write");
  const test = useMutation({
    mutationFn: () => api("post", "/v1/stores/{store}/authoring/provider:smoke-test", { path: { store } }),
  });
  return (
    <Card
      title="provider test"
      actions={
        canWrite && (
          <button type="button" className="primary" disabled={test.isPending} onClick={() => test.mutate()}>
            test the provider
          </button>
        )
      }
    >
      <p className="muted">
        One call to the configured provider with the active prompt on a built-in two-turn probe session: does it answer, and
        does its answer parse? Nothing is written.
      </p>
      {!canWrite && <p className="muted">Testing the provider needs a write token.</p>}
      {test.isPending && <Loading what="provider answer" />}
      <ErrorNote error={test.error} />
      {test.data && <SmokeResult answer={test.data} />}
    </Card>
  );
}

function SmokeResult({ answer }: { answer: S<"engram.v1.SmokeTestResponse"> }) {
  return (
    <section aria-label="provider test result">
      <p className={answer.ok ? "" : "error"} role="status">
        <strong>{answer.ok ? "OK" : "FAILED"}</strong> · {answer.invoker} · {answer.model} ·{" "}
        {Number(answer.latency_ms ?? 0).toFixed(0)} ms · {answer.message}
      </p>
      {answer.ok && <DraftList drafts={answer.drafts ?? []} empty="The provider answered but proposed no drawer." />}
    </section>
  );
}
