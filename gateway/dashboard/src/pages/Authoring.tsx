// How a store's drawers get written: the prompt lab (versions, diff, edit, dry run, promote),
// the compose provider, and the write policy, as three tabs.
import { useParams } from "@tanstack/react-router";
import { useRef, useState, type KeyboardEvent, type ReactNode } from "react";
import { PromptLab } from "./authoring/PromptLab";
import { ProviderTab } from "./authoring/Provider";
import { WritePolicyTab } from "./authoring/WritePolicy";

const TABS = [
  { id: "prompts", label: "prompt lab" },
  { id: "provider", label: "provider" },
  { id: "policy", label: "write policy" },
] as const;
type TabId = (typeof TABS)[number]["id"];

export function AuthoringPage() {
  const { store } = useParams({ from: "/shell/s/$store/authoring" });
  const [tab, setTab] = useState<TabId>("prompts");
  const panels: Record<TabId, ReactNode> = {
    prompts: <PromptLab key={store} store={store} />,
    provider: <ProviderTab key={store} store={store} />,
    policy: <WritePolicyTab key={store} store={store} />,
  };
  return (
    <div>
      <TabList label={`authoring · ${store}`} current={tab} onSelect={setTab} />
      {TABS.map((t) => (
        <div
          key={t.id}
          role="tabpanel"
          id={`panel-${t.id}`}
          aria-labelledby={`tab-${t.id}`}
          hidden={t.id !== tab}
          tabIndex={0}
          className="tabpanel"
        >
          {t.id === tab && panels[t.id]}
        </div>
      ))}
    </div>
  );
}

function TabList({ label, current, onSelect }: { label: string; current: TabId; onSelect: (tab: TabId) => void }) {
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const move = (event: KeyboardEvent, index: number) => {
    const last = TABS.length - 1;
    const next =
      event.key === "ArrowRight" ? (index === last ? 0 : index + 1)
      : event.key === "ArrowLeft" ? (index === 0 ? last : index - 1)
      : event.key === "Home" ? 0
      : event.key === "End" ? last
      : -1;
    if (next < 0) return;
    event.preventDefault();
    onSelect(TABS[next].id);
    refs.current[TABS[next].id]?.focus();
  };
  return (
    <div className="tabs-head">
      <h2>{label}</h2>
      <div role="tablist" aria-label={label} className="tabs">
        {TABS.map((t, i) => (
          <button
            key={t.id}
            ref={(el) => {
              refs.current[t.id] = el;
            }}
            type="button"
            role="tab"
            id={`tab-${t.id}`}
            aria-selected={t.id === current}
            aria-controls={`panel-${t.id}`}
            tabIndex={t.id === current ? 0 : -1}
            onClick={() => onSelect(t.id)}
            onKeyDown={(event) => move(event, i)}
          >
            {t.label}
          </button>
        ))}
      </div>
    </div>
  );
}
