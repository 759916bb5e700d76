// `--out` of `replay run` and `replay diff`. run: a folder that is not empty is refused as a usage
// error (exit 2) naming it and what it holds, before the fixture is opened (it was exit 5, after a
// large fixture's extraction and check); an empty one is used. diff: a folder that already holds a
// report is refused (exit 2) naming the report's files, unless --force, which replaces those files
// and nothing else (it was overwritten without a word). A folder that cannot be made stays exit 5,
// said as that.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoEvents } from './demo-events.ts';
import { exportFixture } from './export.ts';
import { defaultScratchParent } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

let site: LiveSite;
let work: string;
let fixture: string;

beforeAll(async () => {
  site = new LiveSite();
  site.receive(new DemoEvents({ site: site.site, seed: 7 }).initial(T0 + 100));
  await site.advance(T0 + 20_000);
  site.close();
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-out-test-'));
  fixture = join(work, 'fixture');
  await exportFixture({ data: site.dir, tag: 'out', atMs: T0 + 10_000, untilMs: T0 + 20_000, out: fixture });
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

  it('an empty folder is used; one that cannot be made is exit 5, said as that', async () => {
    const out = join(work, 'empty');
    mkdirSync(out);
    const r = await replayCli(['replay', 'run', '--fixture', fixture, '--out', out]);
    expect(r.code, r.err).toBe(0);
    expect(existsSync(join(out, 'run.json'))).toBe(true);
    const blocked = join(work, 'a-file-in-the-way');
    writeFileSync(blocked, 'x');
    const cannot = await replayCli(['replay', 'run', '--fixture', fixture, '--out', join(blocked, 'run')]);
    expect(cannot.code).toBe(5);
    expect(cannot.err).toContain(`tilstand: cannot create the run folder ${join(blocked, 'run')}: ENOTDIR`);
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
    expect(cannot.code).toBe(5);
    expect(cannot.err).toContain(`tilstand: cannot create the report folder ${join(blocked, 'report')}: ENOTDIR`);
  });
});
