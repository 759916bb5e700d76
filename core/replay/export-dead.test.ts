// A `replay export` killed (kill -9, a power cut) left its half-written fixture folder beside --out
// (`.tilstand-export-…`) and the `replay-<name>` tags it had made on the site's tables: kept for
// good, holding their snapshots, and its next export with the same name reused that cut as its
// own. The next export removes what a dead export left, never what a live one is making; but one
// killed once its fixture was whole at --out keeps its tags (they were taken back, the finished
// fixture's cut lost). An export from a data directory it cannot write in is refused up front,
// naming it (a bare EACCES of its record's lock file). An empty --out that exists is written into,
// not replaced (`--out .` failed with EINVAL, a link to an empty folder with ENOTDIR).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { runCli } from '../lsm/testing/cli.ts';
import { runReplayCli } from './cli.ts';
import { DemoEvents } from './demo-events.ts';
import { exportFixture } from './export.ts';
import { openFixture } from './fixture.ts';
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
function childExport(tag: string, out: string, then: 'die' | 'wait' | 'die-after-rename' | 'die-moving-in'): Promise<ChildProcess> {
  const script = `
    import fs from 'node:fs';
    import { syncBuiltinESMExports } from 'node:module';
    const writeFile = fs.writeFileSync;
    const rename = fs.renameSync;
    const then = ${JSON.stringify(then)};
    if (then === 'die-after-rename') {
      // Killed the moment the fixture is in place at --out (renamed there, or its fixture.json moved
      // into an empty --out last), before the export's record is removed.
      fs.renameSync = (from, to) => {
        rename(from, to);
        if (String(to) === ${JSON.stringify(out)} || String(to) === ${JSON.stringify(join(out, 'fixture.json'))}) process.kill(process.pid, 'SIGKILL');
      };
    } else if (then === 'die-moving-in') {
      // Killed once the first of the fixture's entries is moved into an empty --out.
      fs.renameSync = (from, to) => {
        rename(from, to);
        if (String(to).startsWith(${JSON.stringify(`${out}/`)})) process.kill(process.pid, 'SIGKILL');
      };
    } else {
      fs.writeFileSync = (p, ...rest) => {
        if (String(p).endsWith('fixture.json')) {
          fs.writeSync(1, 'writing\\n');
          if (then === 'die') process.kill(process.pid, 'SIGKILL');
          try { fs.readSync(0, Buffer.alloc(1)); } catch {}
        }
        return writeFile(p, ...rest);
      };
    }
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

  for (const form of ['folder', 'archive', 'empty folder'] as const) {
    it(`keeps the tags of one killed once its fixture was at --out (${form}): the cut is whole, the next export of its name reuses it`, async () => {
      // Was: its record still named the tag it made, so the next export deleted the tags of a
      // finished fixture's cut (and made a new cut of that name at another instant).
      const outs = join(work, `delivered-${form.replace(' ', '-')}`);
      mkdirSync(outs);
      const out = join(outs, form === 'archive' ? 'fixture.tar' : 'fixture');
      if (form === 'empty folder') mkdirSync(out);
      const tag = `delivered-${form.replace(' ', '-')}`;
      const child = await childExport(tag, out, 'die-after-rename');
      expect(child.signalCode).toBe('SIGKILL');
      expect(existsSync(form === 'archive' ? out : join(out, 'fixture.json'))).toBe(true);
      const tagged = tablesWithTag(`replay-${tag}`);
      expect(tagged.length).toBeGreaterThan(0);
      expect(records()).not.toEqual([]);
      // Any other export takes back what dead exports left; this one uses the same name.
      const next = join(work, `delivered-${form.replace(' ', '-')}-next`);
      const r = await exportTo(tag, next);
      expect(tablesWithTag(`replay-${tag}`)).toEqual(tagged);
      expect(r.siteTag.reused).toBe(true);
      expect(records()).toEqual([]);
      expect(readdirSync(outs)).toEqual([form === 'archive' ? 'fixture.tar' : 'fixture']);
      if (form === 'empty folder') expect(readdirSync(out)).not.toContainEqual(expect.stringMatching(/^\.tilstand-export-/));
    }, 90_000);
  }

  it('is taken back when it was killed while it moved its fixture into an empty --out: the entries it moved, its tags', async () => {
    const out = join(work, 'moving-in');
    mkdirSync(out);
    const child = await childExport('moving-in', out, 'die-moving-in');
    expect(child.signalCode).toBe('SIGKILL');
    expect(readdirSync(out).filter((n) => !n.startsWith('.')).length).toBe(1);
    expect(existsSync(join(out, 'fixture.json'))).toBe(false);
    expect(tablesWithTag('replay-moving-in').length).toBeGreaterThan(0);
    await exportTo('after-moving-in', join(work, 'after-moving-in'));
    expect(readdirSync(out)).toEqual([]);
    expect(tablesWithTag('replay-moving-in')).toEqual([]);
  }, 90_000);

  it('is taken back by an export retried to the same --out, which then succeeds', async () => {
    // Was: refused, "<out> exists and is not empty" (the entries the killed export had moved in),
    // until an export to another --out took them back.
    const out = join(work, 'moving-in-retried');
    mkdirSync(out);
    const child = await childExport('moving-in-retried', out, 'die-moving-in');
    expect(child.signalCode).toBe('SIGKILL');
    expect(existsSync(join(out, 'fixture.json'))).toBe(false);
    expect(readdirSync(out).filter((n) => !n.startsWith('.')).length).toBe(1);
    const r = await runCli((argv, io) => runReplayCli(argv, io), ['export', '--data', site.dir, '--tag', 'moving-in-retried', '--at', new Date(T0 + 12_000).toISOString(), '--until', new Date(T0 + 20_000).toISOString(), '--out', out]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(openFixture(out, work).manifest.name).toBe('moving-in-retried');
  }, 90_000);

  it('leaves a fixture put into --out since: only a folder without fixture.json loses the entries the killed export moved in', async () => {
    // A person cleared the half-moved folder and copied another fixture into it (or its disk came
    // back after a power cut with other inode or device numbers, so the record's fixture.json no
    // longer matched). Was: the next export removed every entry the record named from --out, and
    // left a fixture.json without its warehouse, events and checksums' files.
    const source = join(work, 'replacement-source');
    await exportTo('replacement', source);
    const out = join(work, 'moving-in-replaced');
    mkdirSync(out);
    const child = await childExport('moving-in-replaced', out, 'die-moving-in');
    expect(child.signalCode).toBe('SIGKILL');
    expect(existsSync(join(out, 'fixture.json'))).toBe(false);
    for (const n of readdirSync(out)) if (!n.startsWith('.')) rmSync(join(out, n), { recursive: true, force: true });
    cpSync(source, out, { recursive: true });
    const copied = readdirSync(out).filter((n) => !n.startsWith('.')).sort();
    await exportTo('after-replaced', join(work, 'after-replaced'));
    expect(readdirSync(out).sort()).toEqual(copied);
    expect(openFixture(out, work).manifest.name).toBe('replacement');
    // Its own fixture.json is not there: the cut it made is taken back, as before.
    expect(tablesWithTag('replay-moving-in-replaced')).toEqual([]);
  }, 90_000);
});

describe('an export into an empty folder that exists', () => {
  // It was removed and the fixture renamed onto its path: `--out .` failed (rmdir '.': EINVAL) and
  // a link to an empty folder too (ENOTDIR), both after the whole export, and a folder's mode
  // became the default one.
  it.skipIf(process.platform === 'win32')("writes into it, given as '.': the folder, its inode and mode stay", async () => {
    const out = join(work, 'dot');
    mkdirSync(out);
    chmodSync(out, 0o710);
    const ino = statSync(out).ino;
    const cwd = process.cwd();
    process.chdir(out);
    try {
      await exportFixture({ data: site.dir, tag: 'dot', atMs: T0 + 12_000, untilMs: T0 + 20_000, out: '.' });
    } finally {
      process.chdir(cwd);
    }
    expect([statSync(out).ino, statSync(out).mode & 0o7777]).toEqual([ino, 0o710]);
    expect(readdirSync(out)).toContain('fixture.json');
    expect(readdirSync(out).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(readdirSync(work).filter((n) => n.startsWith('.tilstand-export-'))).toEqual([]);
    expect(openFixture(out, work).manifest.name).toBe('dot');
  }, 60_000);

  it.skipIf(process.platform === 'win32')('writes into the empty folder a link names; the link stays', async () => {
    const target = join(work, 'link-target');
    mkdirSync(target);
    const link = join(work, 'link');
    symlinkSync(target, link, 'dir');
    await exportTo('link', link);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(target)).toContain('fixture.json');
    expect(openFixture(link, work).manifest.name).toBe('link');
  }, 60_000);
});

/** The records of exports in the site's data directory. */
const records = () => readdirSync(site.dir).filter((n) => n.startsWith('.replay-export-'));

describe('an export from a data directory it cannot write in', () => {
  // chmod does not stop root: as root the folder is made immutable (chattr +i), as cli-out.test.ts does.
  const asRoot = process.getuid?.() === 0;
  const lock = (dir: string) => (asRoot ? execFileSync('chattr', ['+i', dir]) : chmodSync(dir, 0o555));
  const unlock = (dir: string) => (asRoot ? execFileSync('chattr', ['-i', dir]) : chmodSync(dir, 0o755));

  it.skipIf(process.platform === 'win32')('is refused before anything is made, naming the directory', async () => {
    // Was: a bare EACCES (EPERM) of the record's lock file, after the export's checks, naming a
    // hidden file rather than what to do.
    const out = join(work, 'from-read-only');
    lock(site.dir);
    let error: unknown;
    try {
      await exportTo('read-only', out);
    } catch (e) {
      error = e;
    } finally {
      unlock(site.dir);
    }
    expect((error as Error | undefined)?.message).toBe(
      `cannot export from ${site.dir}: an export records itself there and tags its cut on the site's tables: no permission to write in ${site.dir}`,
    );
    expect(tablesWithTag('replay-read-only')).toEqual([]);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(work).filter((n) => n.startsWith('.tilstand-export-'))).toEqual([]);
  }, 60_000);
});
