import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Served by the gateway at /dashboard/ (gateway/routes/dashboard.py); `npm run build` writes dist/.
export default defineConfig({
  base: "/dashboard/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
  server: { proxy: { "/v1": "http://127.0.0.1:8080" } },
});
