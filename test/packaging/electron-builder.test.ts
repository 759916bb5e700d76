// The packaging configuration (build/electron-builder.json), checked as data: packaging itself
// is not run here (the Electron binary and headers cannot be downloaded on this machine).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const config = JSON.parse(readFileSync(join(ROOT, 'build/electron-builder.json'), 'utf8')) as Record<string, unknown> & {
  linux: { target: string[] };
  win: { target: string[] };
  files: string[];
  extraMetadata: { main: string };
};
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

describe('build/electron-builder.json', () => {
  it('targets AppImage and deb on Linux, NSIS on Windows, under one app id', () => {
    expect(config.appId).toMatch(/^[a-z0-9]+(\.[a-z0-9-]+)+$/);
    expect(config.linux.target.sort()).toEqual(['AppImage', 'deb']);
    expect(config.win.target).toEqual(['nsis']);
  });

  it('packs the renderer, the Electron entry, core, bin and node_modules, in an asar', () => {
    for (const f of ['dist/renderer/**/*', 'core/**/*.ts', 'bin/**/*', 'node_modules/**/*']) expect(config.files).toContain(f);
    expect(config.files.some((f) => f.startsWith('electron/'))).toBe(true);
    expect(config.files).toContain('!core/**/*.test.ts');
    expect(config.asar).toBe(true);
    // The main process runs from its bundle (scripts/build-site.mjs), built by `npm run build`.
    expect(config.extraMetadata.main).toBe('dist/electron/main.mjs');
    expect(config.files).toContain('dist/electron/**/*');
    expect(existsSync(join(ROOT, 'electron/main.mjs'))).toBe(true);
    expect(existsSync(join(ROOT, 'electron/preload.cjs'))).toBe(true);
  });

  it('rebuilds better-sqlite3 for Electron at packaging time and keeps native code outside the asar', () => {
    expect(config.npmRebuild).toBe(true);
    expect(config.buildDependenciesFromSource).toBe(true);
    expect(config.asarUnpack).toEqual(expect.arrayContaining(['node_modules/better-sqlite3/**/*']));
  });

  it('is run by `npm run dist`, and the window by `npm run electron`', () => {
    expect(pkg.scripts.dist).toContain('electron-builder --config build/electron-builder.json');
    expect(pkg.scripts.dist).toMatch(/npm run build/);
    expect(pkg.scripts.electron).toMatch(/^npm run build && electron dist\/electron\/main\.mjs\b/);
    expect(pkg.scripts.build).toContain('node scripts/build-site.mjs');
  });
});
