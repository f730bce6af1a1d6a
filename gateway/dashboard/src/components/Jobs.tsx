import type { ReactNode } from "react";

export function JobsProvider({ children }: { children: ReactNode }) {
  return <>{children}</>;
}

export function JobsPanel() {
  return null;
}
