#!/usr/bin/env node
// Runs one TypeScript entry point (benchmarks, scripts) with tsx's loader. An entry that is not a
// file (a mistyped path) is named in one line, exit 2; errors of the entry itself are left as Node
// reports them.
import { register } from 'tsx/esm/api';
import { statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const USAGE = 'usage: run-ts.mjs <file.ts> [args…]';
const entry = process.argv[2];
if (!entry) {
  console.error(USAGE);
  process.exit(2);
}
const path = resolve(entry);
const stat = statSync(path, { throwIfNoEntry: false });
if (stat === undefined || !stat.isFile()) {
  console.error(`run-ts.mjs: ${entry} ${stat === undefined ? 'does not exist' : 'is not a file'} (${USAGE})`);
  process.exit(2);
}
register();
process.argv.splice(1, 1);
await import(pathToFileURL(path).href);
