#!/usr/bin/env node
// The `tilstand` command. The sources are TypeScript; tsx compiles them on load, so the
// checkout runs as it is, with no build step between an edit and a run. The site's V8 flags
// (core/site/v8-flags.ts) are set first, before the process has built up any heap.
import { register } from 'tsx/esm/api';

register();
(await import('../core/site/v8-flags.ts')).applySiteV8Flags();
const { main } = await import('../core/site/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
