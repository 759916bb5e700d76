import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

/** The app's version (package.json), which the floor UI's error reports carry (renderer/src/main.tsx). */
const version = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string }).version;

// The renderer is built once into dist/renderer and served by the headless server and by
// Electron's app scheme alike. No inline scripts or styles: the CSP forbids them.
export default defineConfig({
  root: resolve(import.meta.dirname, '../renderer'),
  base: './',
  build: {
    outDir: resolve(import.meta.dirname, '../dist/renderer'),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
  oxc: { jsx: { runtime: 'automatic' } },
  define: { __TILSTAND_VERSION__: JSON.stringify(version) },
});
