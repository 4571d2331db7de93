import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// `npm run build` (scripts/build.mjs) runs this with --outDir <the new dist>/console; the server serves it at
// /ui/console/ (src/server/console.ts) under a CSP without inline scripts or styles, which the output holds to.
export default defineConfig({
  root: import.meta.dirname,
  base: "/ui/console/",
  plugins: [react()],
  // gen/ resolves @bufbuild/protobuf from the root as the console does: one copy in the bundle
  resolve: { dedupe: ["@bufbuild/protobuf", "react", "react-dom"] },
  build: {
    outDir: "../dist/console",
    emptyOutDir: true,
    target: "es2022",
    modulePreload: { polyfill: false },
    // no data: URLs in scripts or styles
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
