import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// One script and one stylesheet with fixed names, written into the Python package so that
// `pip install charter` ships them and needs no Node.
export default defineConfig({
  plugins: [react()],
  base: "./",
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  build: {
    outDir: "../src/charter/api/static/builder",
    emptyOutDir: true,
    sourcemap: false,
    // elkjs alone is most of it; the builder is one page, loaded once.
    chunkSizeWarningLimit: 2500,
    cssCodeSplit: false,
    modulePreload: false,
    lib: false,
    rollupOptions: {
      input: "src/main.tsx",
      output: {
        format: "iife",
        entryFileNames: "builder.js",
        assetFileNames: (asset) =>
          (asset.names ?? []).some((n) => n.endsWith(".css")) ? "builder.css" : "[name][extname]",
      },
    },
  },
});
