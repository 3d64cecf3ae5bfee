import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console is built into dist/console and served by the gateway at /console (src/platform/console-page.ts),
// under a policy of its own files only: no inline script, no module preload polyfill, nothing from another origin.
export default defineConfig(({ command }) => ({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  clearScreen: false,
  publicDir: false,
  // A production build whoever runs it: under Jest (NODE_ENV=test) Vite would otherwise bundle React's
  // development build and compile JSX to jsxDEV with every element's file and line (a bundle twice the size).
  ...(command === 'build' ? { define: { 'process.env.NODE_ENV': JSON.stringify('production') }, oxc: { jsx: { development: false } } } : {}),
  // `npx vite --config console/vite.config.ts` while the gateway runs: the console reloads as it is edited.
  server: {
    proxy: {
      '/graphql': { target: 'http://localhost:4000', ws: true },
      '/api': 'http://localhost:4000',
    },
  },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 400,
    reportCompressedSize: false,
  },
}));
