// `--out` of `replay run` and `replay diff`. run: a folder that is not empty is refused as a usage
// error (exit 2) naming it and what it holds, before the fixture is opened (it was exit 5, after a
// large fixture's extraction and check); an empty one is used. diff: a folder that already holds a
// report is refused (exit 2) naming the report's files, unless --force, which replaces those files
// and nothing else (it was overwritten without a word). run and export: an --out (or run's
// --scratch) that cannot be written — a file where a parent folder should be, no permission — is
// refused as a usage error before the work (run: exit 5 after the last event; export: exit 5, a bare
// ENOTDIR or EACCES, after the cut was tagged); so is diff's (it was exit 5, the bare error of the
// write). run without --scratch: a default scratch place that cannot be written is refused before
// the fixture is opened, exit 5 naming it and --scratch (it was a bare EROFS or EACCES of mkdtemp,
// for a fixture folder after its checksums were read); a writable one is where the run scratches.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Table } from '../lsm/index.ts';
import { DemoEvents } from './demo-events.ts';
import { exportFixture } from './export.ts';
import { defaultScratchParent } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

// The default scratch place is /dev/shm on Linux, shared with every other process: a test cannot
// make it read-only. It is swapped for a folder of the test's while `override` is set.
const scratchDefault = vi.hoisted(() => ({ override: undefined as string | undefined }));
vi.mock('./replay.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('./replay.ts')>();
  return { ...real, defaultScratchParent: () => scratchDefault.override ?? real.defaultScratchParent() };
});

let site: LiveSite;
let work: string;
let fixture: string;
let archive: string;

// chmod 0o555 does not stop root from writing: as root (CI) a folder is made unwritable with the
// immutable attribute instead (chattr +i, EPERM for root too), as core/sync's
// directory-permission.test.ts does.
const asRoot = process.getuid?.() === 0;

/** Makes `dir` refuse new entries to this process, and checks that it does. */
function lock(dir: string): void {
  if (asRoot) execFileSync('chattr', ['+i', dir]);
  else chmodSync(dir, 0o555);
  expect(() => writeFileSync(join(dir, 'probe'), 'x'), `${dir} could not be made unwritable here`).toThrow(/EACCES|EPERM/);
}

function unlock(dir: string): void {
  if (asRoot) execFileSync('chattr', ['-i', dir]);
  else chmodSync(dir, 0o755);
}

beforeAll(async () => {
  site = new LiveSite();
  site.receive(new DemoEvents({ site: site.site, seed: 7 }).initial(T0 + 100));
  await site.advance(T0 + 20_000);
  site.close();
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-out-test-'));
  fixture = join(work, 'fixture');
  await exportFixture({ data: site.dir, tag: 'out', atMs: T0 + 10_000, untilMs: T0 + 20_000, out: fixture });
  archive = join(work, 'fixture.tar');
  await exportFixture({ data: site.dir, tag: 'out-tar', atMs: T0 + 10_000, untilMs: T0 + 20_000, out: archive });
}, 60_000);

afterAll(() => {
  site?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('replay run --out', () => {
  it('a folder that is not empty is a usage error (exit 2) naming it and what it holds, before the fixture is opened', async () => {
    const out = join(work, 'full');
    mkdirSync(out);
    for (const f of ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'run.json']) writeFileSync(join(out, f), 'x');
    // A fixture that would be refused once opened (exit 5): the answer is about --out, so it was not.
    const notAFixture = join(work, 'not-a-fixture');
    mkdirSync(notAFixture, { recursive: true });
    const r = await replayCli(['replay', 'run', '--fixture', notAFixture, '--out', out]);
    expect([r.code, r.err]).toEqual([2, `tilstand: option '--out': folder ${out} is not empty (it holds a.txt, b.txt, c.txt and 2 more); give a new or empty folder\n`]);
    expect(readdirSync(out).sort()).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'run.json']);
    const file = join(work, 'a-file');
    writeFileSync(file, 'x');
    const onFile = await replayCli(['replay', 'run', '--fixture', notAFixture, '--out', file]);
    expect([onFile.code, onFile.err]).toEqual([2, `tilstand: option '--out': ${file} is a file, not a folder\n`]);
  });

  it('an empty folder is used', async () => {
    const out = join(work, 'empty');
    mkdirSync(out);
    const r = await replayCli(['replay', 'run', '--fixture', fixture, '--out', out]);
    expect(r.code, r.err).toBe(0);
    expect(existsSync(join(out, 'run.json'))).toBe(true);
  });
});

/** A new empty folder under the test's work folder. */
function folder(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  return dir;
}

/** `fn` with `dir` unwritable (`lock`), made writable again after, so the work folder can be removed. */
async function readOnly<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  lock(dir);
  try {
    return await fn();
  } finally {
    unlock(dir);
  }
}

describe('replay run: an --out or --scratch that cannot be written is refused before the run', () => {
  // Observed through the scratch folder: a run extracts the archive there first and, with
  // --keep-scratch, leaves its scratch warehouse there (and says so on stderr), also when it fails;
  // --progress would print the replay's progress on stderr. A refusal leaves the folder empty and
  // says one line.
  const run = (out: string, scratch: string) => replayCli(['replay', 'run', '--fixture', archive, '--out', out, '--scratch', scratch, '--keep-scratch', '--progress']);

  it('an --out under a file: exit 2 naming the file, nothing extracted or replayed', async () => {
    const scratch = folder('scratch-under-file');
    const blocked = join(work, 'a-file-in-the-way');
    writeFileSync(blocked, 'x');
    const out = join(blocked, 'runs', 'a');
    const r = await run(out, scratch);
    expect([r.code, r.err, r.out]).toEqual([2, `tilstand: option '--out': cannot create the run folder ${out}: ${blocked} is a file, not a folder\n`, '']);
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('an --out that can be made is made only at the end: a run that fails first leaves no folder', async () => {
    const out = join(work, 'not-yet', 'deeper', 'run');
    const notAFixture = folder('not-a-fixture-either');
    const r = await replayCli(['replay', 'run', '--fixture', notAFixture, '--out', out]);
    expect([r.code, r.err]).toEqual([2, `tilstand: option '--fixture': ${notAFixture} is not a replay fixture (no fixture.json)\n`]);
    expect(existsSync(join(work, 'not-yet'))).toBe(false);
  });

  it('an --out in a read-only folder (a new one, or an empty one there): exit 2, nothing extracted or replayed', async () => {
    const scratch = folder('scratch-read-only-out');
    const ro = folder('read-only-runs');
    const emptyThere = join(ro, 'empty');
    mkdirSync(emptyThere);
    lock(emptyThere);
    try {
      await readOnly(ro, async () => {
        const r = await run(join(ro, 'run'), scratch);
        expect([r.code, r.err, r.out]).toEqual([2, `tilstand: option '--out': cannot create the run folder ${join(ro, 'run')}: no permission to write in ${ro}\n`, '']);
      });
      const inEmpty = await run(emptyThere, scratch);
      expect([inEmpty.code, inEmpty.err]).toEqual([2, `tilstand: option '--out': cannot write the run into ${emptyThere}: no permission to write in ${emptyThere}\n`]);
    } finally {
      unlock(emptyThere);
    }
    expect(readdirSync(scratch)).toEqual([]);
    expect(readdirSync(ro)).toEqual(['empty']);
    expect(readdirSync(emptyThere)).toEqual([]);
  });

  it('an empty --out in a read-only folder is written into: its own folder need not take a new one', async () => {
    // The run was written beside --out and renamed onto it, so a read-only parent was refused
    // (exit 2); it is written inside the folder now (run-output.ts).
    const ro = folder('read-only-parent');
    const out = join(ro, 'empty-run');
    mkdirSync(out);
    const r = await readOnly(ro, () => replayCli(['replay', 'run', '--fixture', fixture, '--out', out]));
    expect(r.code, r.err).toBe(0);
    expect(readdirSync(out)).toContain('run.json');
    expect(readdirSync(ro)).toEqual(['empty-run']);
  });

  it.skipIf(process.platform === 'win32')('an empty --out that links to a folder in a read-only folder is written into, the link kept', async () => {
    const ro = folder('read-only-linked-parent');
    mkdirSync(join(ro, 'empty-run'));
    const out = join(folder('writable-link-parent'), 'latest');
    symlinkSync(join(ro, 'empty-run'), out, 'dir');
    const r = await readOnly(ro, () => replayCli(['replay', 'run', '--fixture', fixture, '--out', out]));
    expect(r.code, r.err).toBe(0);
    expect(lstatSync(out).isSymbolicLink()).toBe(true);
    expect(readdirSync(join(ro, 'empty-run'))).toContain('run.json');
  });

  it("an --out holding what a run killed while it moved its files in left: refused, saying so; a killed run's temporary folder is not in the way", async () => {
    const half = folder('half-moved');
    for (const f of ['decisions.json', 'proposals.json']) writeFileSync(join(half, f), '[]');
    const r = await replayCli(['replay', 'run', '--fixture', fixture, '--out', half]);
    expect([r.code, r.err]).toEqual([2, `tilstand: option '--out': folder ${half} is not empty (it holds decisions.json, proposals.json: the files of a run stopped while they were moved in (no run.json); remove them); give a new or empty folder\n`]);
    const withTemp = folder('killed-inside');
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise<void>((done) => child.on('exit', () => done()));
    const dead = `.tilstand-run.${child.pid}@${hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 64)}.tmp`;
    mkdirSync(join(withTemp, dead));
    writeFileSync(join(withTemp, dead, 'run.json'), '{');
    const again = await replayCli(['replay', 'run', '--fixture', fixture, '--out', withTemp]);
    expect(again.code, again.err).toBe(0);
    expect(readdirSync(withTemp)).not.toContain(dead);
  });

  it('a read-only --scratch: exit 2 naming it, before the archive is extracted', async () => {
    const ro = folder('read-only-scratch');
    const out = join(work, 'run-scratch-read-only');
    const r = await readOnly(ro, () => run(out, ro));
    expect([r.code, r.err, r.out]).toEqual([2, `tilstand: option '--scratch': no permission to write in ${ro}\n`, '']);
    expect(readdirSync(ro)).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });
});

describe('replay run without --scratch: the default scratch place is tried before the run', () => {
  /** `fn` with `dir` as the default scratch place. */
  async function withDefaultScratch<T>(dir: string, fn: () => Promise<T>): Promise<T> {
    scratchDefault.override = dir;
    try {
      return await fn();
    } finally {
      scratchDefault.override = undefined;
    }
  }

  it('one that cannot be written or is missing: exit 5 naming it and --scratch, before the fixture is opened', async () => {
    const ro = folder('read-only-default-scratch');
    const out = join(work, 'run-default-scratch-read-only');
    // --progress would print the replay's progress on stderr: a refusal says one line.
    const run = (fx: string) => replayCli(['replay', 'run', '--fixture', fx, '--out', out, '--progress']);
    const refused = (place: string, why: string) => [5, `tilstand: cannot make the scratch folder in ${place}, the default place for it: ${why}; give another with --scratch <dir>\n`, ''];
    for (const fx of [fixture, archive]) {
      const r = await withDefaultScratch(ro, () => readOnly(ro, () => run(fx)));
      expect([r.code, r.err, r.out]).toEqual(refused(ro, `no permission to write in ${ro}`));
    }
    const missing = join(work, 'no-such-scratch-place');
    const r = await withDefaultScratch(missing, () => run(archive));
    expect([r.code, r.err, r.out]).toEqual(refused(missing, `${missing} does not exist`));
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(ro)).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });

  it('one that can be written is where the run makes its scratch folder', async () => {
    const place = folder('default-scratch');
    const out = join(work, 'run-default-scratch');
    const r = await withDefaultScratch(place, () => replayCli(['replay', 'run', '--fixture', archive, '--out', out, '--keep-scratch']));
    expect(r.code, r.err).toBe(0);
    const kept = readdirSync(place);
    expect(kept).toEqual([expect.stringMatching(/^tilstand-replay-/)]);
    expect(r.err).toContain(`replay: scratch folder kept: ${join(place, kept[0]!)}\n`);
  });
});

describe('replay export: an --out that cannot be written is refused before the site is read or tagged', () => {
  const tags = () => Table.open(join(site.dir, 'warehouse', 'site_s1.db', 'stock')).listTags().map((t) => t.name);
  const exportTo = (data: string, tag: string, out: string) => replayCli(['replay', 'export', '--data', data, '--tag', tag, '--until', 'now', '--out', out]);
  // A data directory whose config.json the export cannot read (exit 5 when it does): refused about
  // --out instead, the site was not read.
  const unreadSite = () => {
    const dir = mkdtempSync(join(work, 'unread-site-'));
    writeFileSync(join(dir, 'config.json'), '{ not json');
    return dir;
  };

  it('a fixture folder or archive under a file, a folder that is not empty: exit 2 naming it, no tag made', async () => {
    const blocked = join(work, 'a-file-where-the-fixtures-go');
    writeFileSync(blocked, 'x');
    const out = join(blocked, 'fx');
    const r = await exportTo(site.dir, 'early-1', out);
    expect([r.code, r.err, r.out]).toEqual([2, `tilstand: option '--out': cannot create the fixture folder ${out}: ${blocked} is a file, not a folder\n`, '']);
    const unread = await exportTo(unreadSite(), 'early-2', out);
    expect([unread.code, unread.err]).toEqual([2, `tilstand: option '--out': cannot create the fixture folder ${out}: ${blocked} is a file, not a folder\n`]);
    const tar = await exportTo(site.dir, 'early-3', join(blocked, 'f.tar'));
    expect([tar.code, tar.err]).toEqual([2, `tilstand: option '--out': ${blocked} is a file, not a folder\n`]);
    const full = folder('fixture-folder-in-use');
    writeFileSync(join(full, 'something'), 'x');
    const inUse = await exportTo(site.dir, 'early-4', full);
    expect([inUse.code, inUse.err]).toEqual([2, `tilstand: option '--out': ${full} exists and is not empty\n`]);
    for (const t of ['early-1', 'early-2', 'early-3', 'early-4']) expect(tags()).not.toContain(`replay-${t}`);
  });

  it('a fixture folder or archive in a read-only folder: exit 2, no tag made, nothing left there', async () => {
    const ro = folder('read-only-fixtures');
    await readOnly(ro, async () => {
      const tar = join(ro, 'f.tar');
      const r = await exportTo(site.dir, 'early-5', tar);
      expect([r.code, r.err, r.out]).toEqual([2, `tilstand: option '--out': cannot write the archive ${tar}: no permission to write in ${ro}\n`, '']);
      const unread = await exportTo(unreadSite(), 'early-6', tar);
      expect([unread.code, unread.err]).toEqual([2, `tilstand: option '--out': cannot write the archive ${tar}: no permission to write in ${ro}\n`]);
      const dir = join(ro, 'fx');
      const inFolder = await exportTo(site.dir, 'early-7', dir);
      expect([inFolder.code, inFolder.err]).toEqual([2, `tilstand: option '--out': cannot create the fixture folder ${dir}: no permission to write in ${ro}\n`]);
    });
    expect(readdirSync(ro)).toEqual([]);
    for (const t of ['early-5', 'early-6', 'early-7']) expect(tags()).not.toContain(`replay-${t}`);
  });
});

describe('replay diff --out', () => {
  it('a folder holding a report is refused (exit 2) naming it; --force replaces the report’s files and keeps the rest', async () => {
    const [a, b] = [join(work, 'run-a'), join(work, 'run-b')];
    for (const run of [a, b]) expect((await replayCli(['replay', 'run', '--fixture', fixture, '--out', run])).code).toBe(0);
    const out = join(work, 'report');
    mkdirSync(out);
    writeFileSync(join(out, 'notes.txt'), 'mine');
    // A folder with other files but no report is fine.
    expect((await replayCli(['replay', 'diff', a, b, '--out', out])).code).toBe(0);
    const first = readFileSync(join(out, 'report.json'), 'utf8');
    writeFileSync(join(out, 'report.md'), 'the earlier report');
    const again = await replayCli(['replay', 'diff', a, b, '--out', out]);
    expect([again.code, again.err]).toEqual([2, `tilstand: option '--out': folder ${out} already holds a report (report.md, report.html, report.json); give another folder, or --force to replace it\n`]);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toBe('the earlier report');
    const forced = await replayCli(['replay', 'diff', a, b, '--out', out, '--force']);
    expect(forced.code, forced.err).toBe(0);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).not.toBe('the earlier report');
    expect(readFileSync(join(out, 'report.json'), 'utf8')).toBe(first);
    expect(readdirSync(out).sort()).toEqual(['notes.txt', 'report.html', 'report.json', 'report.md']);
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('mine');
    const blocked = join(work, 'another-file-in-the-way');
    writeFileSync(blocked, 'x');
    const cannot = await replayCli(['replay', 'diff', a, b, '--out', join(blocked, 'report')]);
    expect([cannot.code, cannot.err, cannot.out]).toEqual([2, `tilstand: option '--out': cannot create the report folder ${join(blocked, 'report')}: ${blocked} is a file, not a folder\n`, '']);
  });

  it('a report folder in a read-only folder, or a read-only one: exit 2 naming it, nothing written', async () => {
    const [a, b] = [join(work, 'run-a'), join(work, 'run-b')];
    for (const run of [a, b]) if (!existsSync(run)) expect((await replayCli(['replay', 'run', '--fixture', fixture, '--out', run])).code).toBe(0);
    const ro = folder('read-only-reports');
    await readOnly(ro, async () => {
      const inside = join(ro, 'report');
      const r = await replayCli(['replay', 'diff', a, b, '--out', inside]);
      expect([r.code, r.err, r.out]).toEqual([2, `tilstand: option '--out': cannot create the report folder ${inside}: no permission to write in ${ro}\n`, '']);
      const there = await replayCli(['replay', 'diff', a, b, '--out', ro]);
      expect([there.code, there.err, there.out]).toEqual([2, `tilstand: option '--out': cannot write the report into ${ro}: no permission to write in ${ro}\n`, '']);
    });
    expect(readdirSync(ro)).toEqual([]);
  });
});
