#!/usr/bin/env node
// Bundles the entries that run a site into dist/, so a site runs with plain node instead of
// through tsx (`npm start`, `npm run build`, `npm test`'s build step; the benchmark's memory child):
//
//   node scripts/build-site.mjs [site] [electron] [bench]     (no argument: site and electron)
//
//   site       bin/tilstand.mjs    → dist/site/tilstand.mjs     the `tilstand` command (a launcher; the bundle is site.mjs)
//   electron   electron/main.mjs   → dist/electron/main.mjs     the Electron main process
//   bench      bench/child.ts      → dist/bench/child.mjs       the benchmark's child (bench/harness.ts)
//
// Why: tsx compiles on load in a loader thread with its own V8 heap that lives as long as the
// process; a bundled site is up in ≈ 85 MB RSS instead of ≈ 125, three times sooner
// (core/site/DESIGN.md, "How a site process starts"). The developer's entries stay the same files: each bundle is built from
// the entry that runs the sources through tsx, with tsx's `register` replaced by a no-op (the
// bundle is JavaScript already), so both run the same code in the same order (V8 flags first).
//
// What the bundle changes, and how this build keeps it from showing:
// - Packages stay external (node_modules is resolved at run time as before; the S3 SDK is still
//   loaded lazily through createRequire in core/sync/targets/s3.ts).
// - `import.meta.url` would name the bundle instead of the source file. Every source's
//   `import.meta.url` is rewritten to its own file's URL, computed relative to the bundle
//   (`new URL('../../core/site/site.ts', import.meta.url).href`), so paths next to the sources
//   (the renderer's dist/renderer, electron/preload.cjs, createRequire's resolution) are what
//   they are under tsx, wherever the tree is (a checkout, /opt/tilstand, the app's asar). Any
//   other use of `import.meta` fails the build rather than changing meaning silently.
// - Identifiers that two modules share are renamed in one scope; `keepNames` keeps every
//   function's and class's `.name` (error names, kinds) as it is in the sources.
// - Files the code reads from the tree that the packaged app does not carry (it holds core/ and
//   dist/, not docs/) are copied beside the bundle (`copies`): the example rule a new demo directory
//   runs (core/site/init.ts DEMO_RULE_SOURCES reads docs/ first, then this copy).
// Source maps are written beside each bundle (node --enable-source-maps … for source stack traces).

import * as esbuild from 'esbuild';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The bundles, by name: entry and output relative to the repository; `copies`: [from, to] files copied beside it. */
export const BUNDLES = {
  // `launch`: dist/site/tilstand.mjs is a launcher of two lines that imports it first and then the
  // bundle (`site.mjs` beside it): a SIGHUP while the bundle and its packages load (the first
  // ~0.3 s) ended the process, since nothing listened yet (bin/sighup-hold.mjs). The bundle
  // imports it by the same path, so it runs once.
  site: {
    entry: 'bin/tilstand.mjs',
    out: 'dist/site/tilstand.mjs',
    splitting: false,
    launch: './sighup-hold.mjs',
    copies: [
      ['docs/examples/rules/door-down.mts', 'dist/site/examples/rules/door-down.mts'],
      ['bin/sighup-hold.mjs', 'dist/site/sighup-hold.mjs'],
    ],
  },
  electron: { entry: 'electron/main.mjs', out: 'dist/electron/main.mjs', splitting: false },
  // Split at the child's dynamic imports: as under tsx, only the module of the task that runs is
  // loaded (bench/child.ts), so the memory figure's child holds what a site holds and no more.
  bench: { entry: 'bench/child.ts', out: 'dist/bench/child.mjs', splitting: true },
};

export const DEFAULT_BUNDLES = ['site', 'electron'];

const LOADERS = { '.ts': 'ts', '.mts': 'ts', '.tsx': 'tsx', '.js': 'js', '.mjs': 'js' };

/** The entries' `import { register } from 'tsx/esm/api'`, as a no-op. */
const noTsx = {
  name: 'no-tsx',
  setup(build) {
    build.onResolve({ filter: /^tsx\/esm\/api$/ }, () => ({ path: 'tsx/esm/api', namespace: 'no-tsx' }));
    build.onLoad({ filter: /.*/, namespace: 'no-tsx' }, () => ({ contents: 'export function register() {}', loader: 'js' }));
  },
};

/**
 * Rewrites `import.meta.url` in each source to that source's URL relative to the output
 * directory `outDir` (where the bundle and its chunks are written), and refuses any other
 * `import.meta` use.
 */
export function sourceUrlPlugin(outDir) {
  return {
    name: 'source-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.(ts|mts|tsx|js|mjs)$/ }, async (args) => {
        if (args.path.split(sep).includes('node_modules')) return undefined;
        const text = await readFile(args.path, 'utf8');
        if (!text.includes('import.meta')) return undefined;
        const rel = relative(outDir, args.path).split(sep).join('/');
        const errors = [];
        const contents = text.replace(/\bimport\.meta\b(\s*\.\s*[A-Za-z_$][\w$]*)?/g, (m, prop, offset) => {
          if (prop && prop.replace(/[\s.]/g, '') === 'url') return `new URL(${JSON.stringify(rel)}, import.meta.url).href`;
          const line = text.slice(0, offset).split('\n').length;
          errors.push({ text: `${m} (only import.meta.url is mapped to the source file in a bundle, scripts/build-site.mjs)`, location: { file: args.path, line, column: 0 } });
          return m;
        });
        return errors.length > 0 ? { errors } : { contents, loader: LOADERS[extname(args.path)] };
      });
    },
  };
}

/**
 * The esbuild options of one bundle: `entry` → `outFile` (both absolute; chunks beside `outFile`).
 * `external`: modules the entry imports by these paths that stay files beside the bundle.
 */
export function esbuildOptions({ entry, outFile, splitting = false, external = [] }) {
  const outdir = dirname(outFile);
  return {
    entryPoints: { [basename(outFile).replace(/\.mjs$/, '')]: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    external,
    sourcemap: 'linked',
    keepNames: true,
    logLevel: 'warning',
    plugins: [noTsx, sourceUrlPlugin(outdir)],
  };
}

/** The esbuild options of a named bundle (BUNDLES). */
export function bundleOptions(name) {
  const b = BUNDLES[name];
  if (!b) throw new Error(`build-site: unknown bundle '${name}' (expected one of ${Object.keys(BUNDLES).join(', ')})`);
  const out = join(ROOT, b.out);
  if (!b.launch) return esbuildOptions({ entry: join(ROOT, b.entry), outFile: out, splitting: b.splitting });
  return esbuildOptions({ entry: join(ROOT, b.entry), outFile: launchedBundle(out), splitting: b.splitting, external: [b.launch] });
}

/** Where the bundle of a bundle with a launcher (`launch`) is written: `site.mjs` beside the launcher. */
export function launchedBundle(out) {
  return join(dirname(out), 'site.mjs');
}

/** The launcher `out` of a bundle with `launch`: imports `launch`, then the bundle. */
function launcherText(launch, out) {
  return [
    '#!/usr/bin/env node',
    '// The `tilstand` command of a built tree (scripts/build-site.mjs): what must run before the',
    '// bundle and its packages load, then the bundle.',
    `import ${JSON.stringify(launch)};`,
    `await import(${JSON.stringify(`./${basename(launchedBundle(out))}`)});`,
    '',
  ].join('\n');
}

/** Builds the named bundles; returns their output paths. Throws on a build error. */
export async function buildBundles(names = DEFAULT_BUNDLES) {
  const out = [];
  for (const name of names) {
    const options = bundleOptions(name);
    // The directory is the bundle's alone; emptied so no chunk of an earlier build stays.
    await rm(options.outdir, { recursive: true, force: true });
    await esbuild.build(options);
    const { launch, out: outPath } = BUNDLES[name];
    if (launch) await writeFile(join(ROOT, outPath), launcherText(launch, join(ROOT, outPath)), { mode: 0o755 });
    for (const [from, to] of BUNDLES[name].copies ?? []) {
      await mkdir(dirname(join(ROOT, to)), { recursive: true });
      await copyFile(join(ROOT, from), join(ROOT, to));
    }
    out.push(join(ROOT, BUNDLES[name].out));
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  try {
    await buildBundles(names.length > 0 ? names : DEFAULT_BUNDLES);
  } catch (e) {
    // esbuild has printed its errors already; this is the first line of what failed.
    const first = e instanceof Error ? e.message.split('\n')[0] : String(e);
    console.error(first.startsWith('build-site:') ? first : `build-site: ${first}`);
    process.exitCode = 1;
  }
}
