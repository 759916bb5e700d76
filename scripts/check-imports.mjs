#!/usr/bin/env node
// The import rule of the layout in DESIGN.md: the folder decides what a file may import.
//   - nothing in core/ imports electron, react or the DOM's types;
//   - nothing in renderer/ imports a node built-in;
//   - inside core/, arrows point one way (core/lsm imports no other core folder, and so on);
//   - electron/ imports only core/site (the composition root) from core;
//   - what core/ and electron/ run (everything but tests and their helpers) imports only packages
//     of package.json's dependencies or optionalDependencies: devDependencies are not installed
//     with the app (electron-builder, `npm ci --omit=dev`).
// Exits 1 with one line per violation. `checkTree(root)` is exported for the tests.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** core folder → core folders it may import (besides itself). */
export const CORE_ALLOWED = {
  lsm: [],
  ingest: ['lsm'],
  inbox: ['lsm'],
  agents: ['lsm', 'inbox'],
  sync: ['lsm', 'inbox'],
  replay: ['lsm', 'ingest', 'agents', 'inbox'],
  site: ['lsm', 'ingest', 'inbox', 'agents', 'sync', 'replay'],
};

const UI_PACKAGES = /^(electron|react|react-dom|zustand)(\/|$)/;
const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs|jsx)$/;
const SPEC =
  /(?:^|[\s;(])(?:import|export)\s[^'"`]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*['"]([^'"]+)['"]|(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/gm;

function walk(dir, out) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, out);
    else if (SOURCE.test(name)) out.push(p);
  }
  return out;
}

/** A file only tests load: `*.test.*`, `test-support.*`, or anything under a `testing/` or `test-support/` folder. */
const TEST_ONLY = /(\.test\.[cm]?[jt]sx?$|(^|[\\/])test-support(\.[cm]?[jt]sx?$|[\\/])|(^|[\\/])testing[\\/])/;

/** The package a bare specifier names ('@scope/name' or 'name'), or undefined for a path or built-in. */
function packageOf(spec) {
  if (spec.startsWith('.') || spec.startsWith('/') || BUILTINS.has(spec) || spec.startsWith('node:')) return undefined;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Packages the app is installed with, or undefined when the tree has no package.json. */
function runtimePackages(root) {
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  } catch {
    return undefined;
  }
  return new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]);
}

function specifiers(text) {
  const found = [];
  for (const m of text.matchAll(SPEC)) found.push(m[1] ?? m[2] ?? m[3]);
  return found;
}

/** Which top-level area (and core folder) a repository path belongs to. */
function areaOf(rel) {
  const parts = rel.split(/[\\/]/);
  if (parts[0] === 'core') return { area: 'core', folder: parts[1] };
  return { area: parts[0], folder: undefined };
}

export function checkTree(root) {
  const violations = [];
  const files = [...walk(join(root, 'core'), []), ...walk(join(root, 'renderer'), []), ...walk(join(root, 'electron'), [])];
  const installed = runtimePackages(root);
  for (const file of files) {
    const rel = relative(root, file);
    const from = areaOf(rel);
    const text = readFileSync(file, 'utf8');
    if (from.area === 'core' && /\/\/\/\s*<reference\s+lib\s*=\s*["']dom/i.test(text)) {
      violations.push(`${rel}: core must not use the DOM's types`);
    }
    for (const spec of specifiers(text)) {
      const pkg = packageOf(spec);
      if (installed && pkg && (from.area === 'core' || from.area === 'electron') && !TEST_ONLY.test(rel) && !installed.has(pkg)) {
        violations.push(`${rel}: '${pkg}' is not in package.json's dependencies or optionalDependencies (the app is installed without devDependencies)`);
      }
      if (from.area === 'core' && UI_PACKAGES.test(spec)) {
        violations.push(`${rel}: core must not import '${spec}'`);
      }
      if (from.area === 'renderer' && BUILTINS.has(spec)) {
        violations.push(`${rel}: renderer must not import the node built-in '${spec}'`);
      }
      if (!spec.startsWith('.')) continue;
      const target = relative(root, resolve(dirname(file), spec));
      const to = areaOf(target);
      // A test-only file (a test, a `testing/` or `test-support` helper) is not shipped as the
      // app's: app code that imports one ships test code, or breaks when tests' helpers change.
      if (!TEST_ONLY.test(rel) && (TEST_ONLY.test(target) || TEST_ONLY.test(`${target}.ts`))) {
        violations.push(`${rel}: app code must not import the test-only file '${spec}'`);
      }
      if (from.area === 'renderer' && to.area === 'core' && !/^\s*import\s+type\b/m.test(lineOf(text, spec))) {
        violations.push(`${rel}: renderer may import only types from core ('${spec}')`);
      }
      if (from.area === 'electron' && to.area === 'core' && to.folder !== 'site') {
        violations.push(`${rel}: electron may import only core/site ('${spec}')`);
      }
      if (from.area === 'electron' && to.area === 'renderer') {
        violations.push(`${rel}: electron must not import the renderer ('${spec}')`);
      }
      if (from.area === 'core' && to.area !== 'core' && target.split(sep)[0] !== '..') {
        violations.push(`${rel}: core must not import outside core ('${spec}')`);
      }
      if (from.area === 'core' && to.area === 'core' && from.folder !== to.folder) {
        const allowed = CORE_ALLOWED[from.folder];
        if (!allowed || !allowed.includes(to.folder)) {
          violations.push(`${rel}: core/${from.folder} must not import core/${to.folder} ('${spec}')`);
        }
      }
    }
  }
  return violations;
}

function lineOf(text, spec) {
  const at = text.indexOf(`'${spec}'`) >= 0 ? text.indexOf(`'${spec}'`) : text.indexOf(`"${spec}"`);
  const start = text.lastIndexOf('\n', text.lastIndexOf('import', at)) + 1;
  return text.slice(start, at);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const violations = checkTree(root);
  for (const v of violations) console.error(`import rule: ${v}`);
  if (violations.length > 0) process.exit(1);
  console.log('import rule: ok');
}
