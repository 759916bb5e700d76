#!/usr/bin/env node
// Runs one TypeScript entry point (benchmarks, scripts) with tsx's loader.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const entry = process.argv[2];
if (!entry) {
  console.error('usage: run-ts.mjs <file.ts> [args…]');
  process.exit(2);
}
process.argv.splice(1, 1);
await import(pathToFileURL(resolve(entry)).href);
