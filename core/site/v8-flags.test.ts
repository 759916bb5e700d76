// The site's V8 flags: one list, set first by every entry that runs a site (and by the memory
// benchmark's child, which must start as a site starts), and never a heap limit. The launch
// settings (SITE_LAUNCH): one list that every launcher of a site carries.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applySiteV8Flags, missingLaunchSettings, SITE_LAUNCH, SITE_V8_FLAGS } from './v8-flags.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const source = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');
/** `import('<spec>')` as the entries write it (built, so the import rule's scan does not take it for an import). */
const q = "'";
const dynImport = (spec: string) => `import(${q}${spec}${q})`;

describe('site V8 flags', () => {
  it('set no heap limit (a limit turns a legitimate peak into a crash)', () => {
    for (const f of SITE_V8_FLAGS) expect(f).not.toMatch(/max-old-space|max-heap|max-semi-space|old-space-size|heap-size/);
    expect(SITE_V8_FLAGS).toContain('--heap-growing-percent=25');
  });

  it('are accepted by V8 at run time', () => {
    expect(() => applySiteV8Flags()).not.toThrow();
  });

  for (const entry of ['bin/tilstand.mjs', 'electron/main.mjs']) {
    it(`${entry} sets them before it loads the site`, () => {
      const s = source(entry);
      const apply = s.indexOf(`(await ${dynImport('../core/site/v8-flags.ts')}).applySiteV8Flags();`);
      expect(apply).toBeGreaterThan(0);
      const firstSiteImport = Math.min(...['../core/site/cli/main.ts', './main-process.ts', '../core/site/site.ts'].map((m) => s.indexOf(dynImport(m))).filter((i) => i >= 0));
      expect(apply).toBeLessThan(firstSiteImport);
    });
  }

  it("the memory benchmark's child sets them as its first step (the same list, not a copy)", () => {
    const s = source('bench/tasks.ts');
    const body = s.slice(s.indexOf('export async function memory('));
    expect(body.indexOf('applySiteV8Flags();')).toBeGreaterThan(0);
    expect(body.indexOf('applySiteV8Flags();')).toBeLessThan(body.indexOf(dynImport('../core/site/config.ts')));
    expect(s).not.toMatch(/heap-growing-percent/);
  });
});

describe('site launch settings (SITE_LAUNCH)', () => {
  const envWords = Object.entries(SITE_LAUNCH.env).map(([k, v]) => `${k}=${v}`);

  it('are a young-generation size and a malloc setting, never a heap limit', () => {
    expect(SITE_LAUNCH.nodeFlags).toEqual(['--max-semi-space-size=8']);
    for (const f of SITE_LAUNCH.nodeFlags) expect(f).not.toMatch(/max-old-space|max-heap|old-space-size|heap-size/);
    expect(SITE_LAUNCH.env).toEqual({ MALLOC_ARENA_MAX: '2' });
  });

  it('take effect in a node started with them, on the command line or in NODE_OPTIONS', () => {
    // A young generation of 2 × 8 MiB semi-spaces instead of 2 × 16 once a load has grown it.
    const probe = "let k=[];for(let i=0;i<3e6;i++){k.push({a:i,b:'x'+i});if(k.length>2e5)k=[]}" +
      "process.stdout.write(String(require('v8').getHeapSpaceStatistics().find(s=>s.space_name==='new_space').space_size/2**20))";
    const newSpaceMB = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      Number(execFileSync(process.execPath, [...args, '-e', probe], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...env } }));
    const launched = newSpaceMB([...SITE_LAUNCH.nodeFlags]);
    expect(launched).toBe(16);
    expect(newSpaceMB([])).toBeGreaterThanOrEqual(launched); // 32 here (V8 sizes its default by the machine's memory)
    expect(newSpaceMB([], { NODE_OPTIONS: SITE_LAUNCH.nodeFlags.join(' ') })).toBe(16);
  });

  it('missingLaunchSettings names what a process was started without', () => {
    expect(missingLaunchSettings([], {}, 'linux')).toEqual([...SITE_LAUNCH.nodeFlags, ...envWords]);
    expect(missingLaunchSettings([...SITE_LAUNCH.nodeFlags], { ...SITE_LAUNCH.env })).toEqual([]);
    expect(missingLaunchSettings(['--inspect'], { NODE_OPTIONS: `--trace-warnings ${SITE_LAUNCH.nodeFlags.join(' ')}`, ...SITE_LAUNCH.env })).toEqual([]);
    expect(missingLaunchSettings([...SITE_LAUNCH.nodeFlags], { MALLOC_ARENA_MAX: '8' }, 'linux')).toEqual(envWords);
    // glibc's variable means nothing on Windows: not asked for there.
    expect(missingLaunchSettings([], {}, 'win32')).toEqual([...SITE_LAUNCH.nodeFlags]);
  });

  it('npm start launches the site bundle with them', () => {
    const pkg = JSON.parse(source('package.json')) as { scripts: Record<string, string> };
    // `exec`: the shell npm runs the script in becomes node, so a signal npm forwards reaches the site.
    expect(pkg.scripts.start).toBe([...envWords, 'exec', 'node', ...SITE_LAUNCH.nodeFlags, 'dist/site/tilstand.mjs', 'start'].join(' '));
  });

  it('the systemd unit launches the site bundle with them', () => {
    const unit = source('build/tilstand.service');
    for (const w of envWords) expect(unit).toMatch(new RegExp(`^Environment=${w}$`, 'm'));
    const exec = /^ExecStart=(.*)$/m.exec(unit)![1]!.split(' ');
    expect(exec.slice(0, 1 + SITE_LAUNCH.nodeFlags.length)).toEqual(['/usr/bin/node', ...SITE_LAUNCH.nodeFlags]);
    expect(exec[1 + SITE_LAUNCH.nodeFlags.length]).toBe('/opt/tilstand/dist/site/tilstand.mjs');
  });

  it("the Windows service's documented NSSM settings pass the node flags (NODE_OPTIONS; no glibc there)", () => {
    const doc = source('docs/operations.md');
    expect(doc).toContain(`nssm set Tilstand AppEnvironmentExtra ELECTRON_RUN_AS_NODE=1 NODE_OPTIONS=${SITE_LAUNCH.nodeFlags.join(' ')}\n`);
  });

  it("the memory benchmark's child is launched with them by the harness (the same list, not a copy)", () => {
    const s = source('bench/harness.ts');
    expect(s).toContain("import { SITE_LAUNCH } from '../core/site/v8-flags.ts';");
    expect(s).not.toMatch(/max-semi-space|MALLOC_ARENA/);
  });
});
