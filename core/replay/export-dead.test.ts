// A `replay export` killed (kill -9, a power cut) left its half-written fixture folder beside --out
// (`.tilstand-export-…`) and the `replay-<name>` tags it had made on the site's tables: kept for
// good, holding their snapshots, and its next export with the same name reused that cut as its
// own. The next export removes what a dead export left, never what a live one is making.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { DemoEvents } from './demo-events.ts';
import { exportFixture } from './export.ts';
import { defaultScratchParent } from './replay.ts';
import { LiveSite, T0 } from './test-support.ts';

let site: LiveSite;
let work: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  site = new LiveSite();
  site.receive(new DemoEvents({ site: site.site, seed: 9 }).initial(T0 + 100));
  await site.advance(T0 + 20_000);
  site.close();
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-export-dead-test-'));
}, 60_000);

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  site?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The tables of the site that hold `tag`. */
function tablesWithTag(tag: string): string[] {
  const catalog = new Catalog(join(site.dir, 'warehouse'));
  return catalog.listTables(site.database).filter((t) => catalog.getTable({ database: site.database, table: t }).tags.exists(tag));
}

/** The export's temporary folders in `dir`. */
const temps = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('.tilstand-export-'));

/**
 * `replay export --tag <tag>` in a child process that, as it writes the fixture's manifest (the
 * cut made, every other file written), prints `writing` and either kills itself (SIGKILL) or
 * waits, alive, until its stdin closes. Resolves once it is dead or has printed it (bounded: 30 s).
 */
function childExport(tag: string, out: string, then: 'die' | 'wait'): Promise<ChildProcess> {
  const script = `
    import fs from 'node:fs';
    import { syncBuiltinESMExports } from 'node:module';
    const writeFile = fs.writeFileSync;
    fs.writeFileSync = (p, ...rest) => {
      if (String(p).endsWith('fixture.json')) {
        fs.writeSync(1, 'writing\\n');
        if (${JSON.stringify(then)} === 'die') process.kill(process.pid, 'SIGKILL');
        try { fs.readSync(0, Buffer.alloc(1)); } catch {}
      }
      return writeFile(p, ...rest);
    };
    syncBuiltinESMExports();
    const { exportFixture } = await import(${JSON.stringify(resolve(__dirname, 'export.ts'))});
    await exportFixture({ data: ${JSON.stringify(site.dir)}, tag: ${JSON.stringify(tag)}, atMs: ${T0 + 10_000}, untilMs: ${T0 + 20_000}, out: ${JSON.stringify(out)} });
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((done, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`child export: not at its manifest in 30 s (${out})`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (then === 'wait' && out.includes('writing\n')) {
        clearTimeout(timer);
        done(child);
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      done(child);
    });
  });
}

const exportTo = (tag: string, out: string) => exportFixture({ data: site.dir, tag, atMs: T0 + 12_000, untilMs: T0 + 20_000, out });

describe('what an export that died left', () => {
  it('is removed by the next export: its temporary folder and the tags it made', async () => {
    const outs = join(work, 'killed');
    mkdirSync(outs);
    const child = await childExport('dead', join(outs, 'fixture'), 'die');
    expect(child.signalCode).toBe('SIGKILL');
    expect(temps(outs)).toHaveLength(1);
    expect(tablesWithTag('replay-dead').length).toBeGreaterThan(0);
    // Another export, into another folder, with the same name.
    const next = join(work, 'next');
    mkdirSync(next);
    const r = await exportTo('dead', join(next, 'fixture'));
    // Was: the killed export's folder stayed, and its cut was reused as this export's.
    expect(temps(outs)).toEqual([]);
    expect(r.siteTag.reused).toBe(false);
    expect(r.cutMs).toBe(T0 + 12_000);
    expect(existsSync(join(next, 'fixture', 'fixture.json'))).toBe(true);
  }, 90_000);

  it('is not what a live export is making', async () => {
    const outs = join(work, 'live');
    mkdirSync(outs);
    const child = await childExport('alive', join(outs, 'fixture'), 'wait');
    expect(child.exitCode).toBe(null);
    const tagged = tablesWithTag('replay-alive');
    expect(tagged.length).toBeGreaterThan(0);
    await exportTo('beside', join(work, 'beside'));
    expect(temps(outs)).toHaveLength(1);
    expect(tablesWithTag('replay-alive')).toEqual(tagged);
    // Once it is dead, the next export removes them.
    child.kill('SIGKILL');
    await new Promise((done) => (child.exitCode !== null || child.signalCode !== null ? done(undefined) : child.on('exit', done)));
    await exportTo('after', join(work, 'after'));
    expect(temps(outs)).toEqual([]);
    expect(tablesWithTag('replay-alive')).toEqual([]);
  }, 90_000);
});
