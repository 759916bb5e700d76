#!/usr/bin/env node
// The `tilstand` command, as developers run it. The sources are TypeScript; tsx compiles them
// on load, so the checkout runs as it is, with no build step between an edit and a run. The
// site's V8 flags (core/site/v8-flags.ts) are set first, before the process has built up any heap.
// This file is also the entry of the site's bundle, dist/site/site.mjs, which the launcher
// dist/site/tilstand.mjs imports (`npm start`, the service; scripts/build-site.mjs `launch`), where
// `register` is a no-op: the same steps in the same order,
// without tsx's loader thread and its heap (core/site/DESIGN.md, "How a site process starts").
// First of all, a SIGHUP that comes before `start` listens is held for it (sighup-hold.mjs).
import './sighup-hold.mjs';
import { register } from 'tsx/esm/api';

register();
(await import('../core/site/v8-flags.ts')).applySiteV8Flags();
const { main } = await import('../core/site/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
