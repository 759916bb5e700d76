#!/usr/bin/env node
// The `tilstand` command. The sources are TypeScript; tsx compiles them on load, so the
// checkout runs as it is, with no build step between an edit and a run.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../core/site/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
