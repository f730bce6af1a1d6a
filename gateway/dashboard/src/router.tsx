// Every page of the dashboard and its path under /dashboard/. A store's pages live under
// /s/<store>/…, so switching store keeps the page and a link names the store it shows.
import type { QueryClient } from "@tanstack/react-query";
import { createRootRouteWithContext, createRoute, createRouter, redirect } from "@tanstack/react-router";
import { getToken } from "./api/client";
import { Chrome } from "./components/Chrome";
import { AuthoringPage } from "./pages/Authoring";
import { CorpusPage } from "./pages/Corpus";
import { DrawerPage } from "./pages/Drawer";
import { type DrawersParams, DrawersPage, readDrawersParams } from "./pages/Drawers";
import { HomePage } from "./pages/Home";
import { InsightPage } from "./pages/Insight";
import { type LinksParams, LinksPage, readLinksParams } from "./pages/Links";
import { LoginPage } from "./pages/Login";
import { RawPage } from "./pages/Raw";
import { SearchPage, type SearchParams, readSearchParams } from "./pages/Search";
import { StoresPage } from "./pages/Stores";
import { TokensPage } from "./pages/Tokens";

const root = createRootRouteWithContext<{ queries: QueryClient }>()({});

const login = createRoute({ getParentRoute: () => root, path: "/login", component: LoginPage });

const shell = createRoute({
  getParentRoute: () => root,
  id: "shell",
  component: Chrome,
  beforeLoad: () => {
    if (!getToken()) throw redirect({ to: "/login" });
  },
});

const home = createRoute({ getParentRoute: () => shell, path: "/", component: HomePage });
const stores = createRoute({ getParentRoute: () => shell, path: "/stores", component: StoresPage });
const tokens = createRoute({ getParentRoute: () => shell, path: "/tokens", component: TokensPage });

export const storeRoute = createRoute({ getParentRoute: () => shell, path: "/s/$store" });
export const searchRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: "/search",
  component: SearchPage,
  validateSearch: (search: Record<string, unknown>): SearchParams => readSearchParams(search),
});
export const drawersRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: "/drawers",
  component: DrawersPage,
  validateSearch: (search: Record<string, unknown>): DrawersParams => readDrawersParams(search),
});
const drawer = createRoute({ getParentRoute: () => storeRoute, path: "/drawers/$id", component: DrawerPage });
const raw = createRoute({ getParentRoute: () => storeRoute, path: "/raw", component: RawPage });
const corpus = createRoute({ getParentRoute: () => storeRoute, path: "/corpus", component: CorpusPage });
const authoring = createRoute({ getParentRoute: () => storeRoute, path: "/authoring", component: AuthoringPage });
const links = createRoute({
  getParentRoute: () => storeRoute,
  path: "/links",
  component: LinksPage,
  validateSearch: (search: Record<string, unknown>): LinksParams => readLinksParams(search),
});
const insight = createRoute({ getParentRoute: () => storeRoute, path: "/insight", component: InsightPage });

const tree = root.addChildren([
  login,
  shell.addChildren([
    home,
    stores,
    tokens,
    storeRoute.addChildren([searchRoute, drawersRoute, drawer, raw, corpus, authoring, links, insight]),
  ]),
]);

export const router = createRouter({ routeTree: tree, basepath: "/dashboard", context: { queries: undefined! } });

declare module "@tanstack/react-router" {
  interface Register {
    router: typeof router;
  }
}
