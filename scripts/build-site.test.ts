// scripts/build-site.mjs on small trees of real files: each bundle is built with esbuild and run
// with plain node, and what it prints is what the sources mean under tsx.

import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';
import { fileTrees } from './test-tree.ts';
// @ts-expect-error plain ESM script without types
import { BUNDLES, DEFAULT_BUNDLES, esbuildOptions } from './build-site.mjs';
import { DEMO_RULE_SOURCES } from '../core/site/init.ts';

const ROOT = join(import.meta.dirname, '..');

const tree = fileTrees('build-site-');

/** Builds `root/src/main.ts` (or `entry`) to `root/out/site/main.mjs`; returns the output path. */
async function bundle(root: string, entry = 'src/main.ts', splitting = false): Promise<string> {
  const outFile = join(root, 'out', 'site', 'main.mjs');
  await esbuild.build({ ...esbuildOptions({ entry: join(root, entry), outFile, splitting }), logLevel: 'silent' });
  return outFile;
}
const runNode = (file: string): string => execFileSync(process.execPath, [file], { encoding: 'utf8' });

describe('scripts/build-site.mjs', () => {
  it('is the build step of npm start, npm run build and npm test; npm start runs the bundle, the bin stays on tsx', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string>; dependencies: Record<string, string> };
    // (with the site's launch settings before it: core/site/v8-flags.test.ts)
    expect(pkg.scripts.start).toMatch(/(^| )node (--\S+ )*dist\/site\/tilstand\.mjs start$/);
    for (const s of ['prestart', 'build', 'test']) expect(pkg.scripts[s]).toMatch(/vite build [^&]*&& node scripts\/build-site\.mjs( |$)/);
    expect(pkg.scripts.test).toMatch(/node scripts\/build-site\.mjs && vitest run$/);
    expect(BUNDLES.site.entry).toBe('bin/tilstand.mjs');
    expect(pkg.bin.tilstand).toBe('bin/tilstand.mjs');
    // A dependency, not a dev one: `npm ci --omit=dev && npm run build` builds the site.
    expect(pkg.dependencies.esbuild).toMatch(/^\d+\.\d+\.\d+$/);
    expect(DEFAULT_BUNDLES).toEqual(['site', 'electron']);
  });

  it("copies the demo's rule beside the site bundle, where the packaged app has it and init looks for it", () => {
    // The packaged app (build/electron-builder.json) carries dist/site but not docs/, where the
    // example is: a new demo directory's rules/door-down.mts is read from the copy there.
    expect(BUNDLES.site.copies).toContainEqual(['docs/examples/rules/door-down.mts', 'dist/site/examples/rules/door-down.mts']);
    // And the SIGHUP hold its launcher imports before the bundle (`launch`).
    expect(BUNDLES.site.copies).toContainEqual(['bin/sighup-hold.mjs', 'dist/site/sighup-hold.mjs']);
    expect(BUNDLES.site.launch).toBe('./sighup-hold.mjs');
    const packaged = (JSON.parse(readFileSync(join(ROOT, 'build', 'electron-builder.json'), 'utf8')) as { files: string[] }).files;
    expect(packaged).toContain('dist/site/**/*');
    expect(packaged.filter((f) => f.startsWith('docs'))).toEqual([]);
    expect(DEMO_RULE_SOURCES).toEqual(['docs/examples/rules/door-down.mts', 'dist/site/examples/rules/door-down.mts'].map((f) => join(ROOT, f)));
  });

  it("gives every source its own import.meta.url, relative to wherever the bundle is", async () => {
    const root = tree({
      'src/main.ts': "import { url, next } from './deep/a.ts';\nconsole.log(JSON.stringify({ main: import.meta.url, url, next }));",
      'src/deep/a.ts': "// import.meta.url in a comment is harmless\nexport const url: string = import.meta.url;\nexport const next = new URL('../../dist/renderer', import.meta . url).href;",
    });
    const out = await bundle(root);
    const got = JSON.parse(runNode(out)) as Record<string, string>;
    expect(got.main).toBe(pathToFileURL(join(root, 'src/main.ts')).href);
    expect(got.url).toBe(pathToFileURL(join(root, 'src/deep/a.ts')).href);
    expect(got.next).toBe(pathToFileURL(join(root, 'dist/renderer')).href);
    // Relative, not absolute: the tree can move (a checkout, /opt, an asar) with its bundle.
    const moved = tree({});
    cpSync(root, moved, { recursive: true });
    rmSync(root, { recursive: true });
    const again = JSON.parse(runNode(join(moved, 'out', 'site', 'main.mjs'))) as Record<string, string>;
    expect(again.url).toBe(pathToFileURL(join(moved, 'src/deep/a.ts')).href);
  });

  it('also in the chunks of a split bundle', async () => {
    const root = tree({
      'src/main.ts': "const { url } = await import('./lazy/b.ts');\nconsole.log(url);",
      'src/lazy/b.ts': 'export const url = import.meta.url;',
    });
    expect(runNode(await bundle(root, 'src/main.ts', true)).trim()).toBe(pathToFileURL(join(root, 'src/lazy/b.ts')).href);
  });

  it('refuses every other use of import.meta, naming the file and line', async () => {
    const root = tree({ 'src/main.ts': "const a = 1;\nconsole.log(import.meta.dirname, a);" });
    await expect(bundle(root)).rejects.toThrow(/main\.ts:2:.*import\.meta\.dirname/s);
    const bare = tree({ 'src/main.ts': 'console.log(Object.keys(import.meta));' });
    await expect(bundle(bare)).rejects.toThrow(/only import\.meta\.url/);
  });

  it("replaces the developer entry's tsx register with a no-op, and keeps packages external", async () => {
    const root = tree({
      'src/main.mjs': "import { register } from 'tsx/esm/api';\nimport { join } from 'node:path';\nregister();\nconst { v } = await import('./v.ts');\nconsole.log(v + join('a', 'b'));",
      'src/v.ts': "import { connect } from 'some-package';\nexport const v: string = typeof connect === 'function' ? 'x' : 'y';",
    });
    const outFile = join(root, 'out', 'site', 'main.mjs');
    await esbuild.build({ ...esbuildOptions({ entry: join(root, 'src/main.mjs'), outFile }), logLevel: 'silent' });
    const text = readFileSync(outFile, 'utf8');
    expect(text).not.toMatch(/from "tsx|import\("tsx/);
    expect(text).toMatch(/from "some-package"/);
  });

  it("keeps every class's and function's name when two modules use the same one", async () => {
    const root = tree({
      'src/main.ts': "import { A } from './a.ts';\nimport { B } from './b.ts';\nconsole.log([A.name, B.name, new A().kind(), new B().kind()].join(' '));",
      'src/a.ts': "class SiteError extends Error { kind() { return this.constructor.name; } }\nexport const A = SiteError;",
      'src/b.ts': "class SiteError extends Error { kind() { return this.constructor.name; } }\nexport const B = SiteError;",
    });
    expect(runNode(await bundle(root)).trim()).toBe('SiteError SiteError SiteError SiteError');
  });
});
