// Queries the whole dashboard shares: who is calling, the stores, one store's stats, the
// system signal. Pages add their own with `useQuery` + `api`.
import { useQuery } from "@tanstack/react-query";
import { api, getToken } from "./client";

export type TierName = "read" | "write" | "admin";

export function tierName(tier: string | undefined): TierName {
  const name = (tier ?? "").replace("CALLER_TIER_", "").toLowerCase();
  return name === "admin" || name === "write" ? name : "read";
}

const RANK: Record<TierName, number> = { read: 1, write: 2, admin: 3 };

/** Whether a token of `tier` may do what needs `needed` (the gateway decides; this hides). */
export function allows(tier: TierName, needed: TierName): boolean {
  return RANK[tier] >= RANK[needed];
}

export function useWhoAmI() {
  return useQuery({
    queryKey: ["whoami", getToken()],
    queryFn: () => api("get", "/v1/whoami"),
    enabled: getToken() !== "",
    retry: false,
    staleTime: 60_000,
  });
}

export function useTier(): TierName {
  return tierName(useWhoAmI().data?.tier);
}

export function useStores() {
  return useQuery({ queryKey: ["stores"], queryFn: () => api("get", "/v1/stores"), staleTime: 10_000 });
}

export function useStats(store: string) {
  return useQuery({
    queryKey: ["stats", store],
    queryFn: () => api("get", "/v1/stores/{store}/stats", { path: { store } }),
    enabled: store !== "",
    staleTime: 5_000,
  });
}

export function useSystem() {
  return useQuery({
    queryKey: ["system"],
    queryFn: () => api("get", "/v1/system"),
    refetchInterval: 10_000,
  });
}
