// `tilstand hq …` against a directory HQ, in-process: a --hq that names no directory is an error
// that says so (the commands only read: it is a typo, or no site has synced there yet), and an
// HQ no site has shipped to says that instead of printing nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { SyncEngine } from '../engine.ts';
import { sitePrefix } from '../names.ts';
import { DirectoryTarget } from '../targets/directory.ts';
import { makeSite } from '../test-support/site-fixture.ts';
import { runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hq = (...args: string[]) => runCli((argv, io) => runHq(argv, io), args);

describe('tilstand hq on a directory', () => {
  it('names a --hq directory that does not exist, for every command, with exit 1', async () => {
    const missing = join(dir, 'no-such-hq');
    for (const args of [['sites'], ['tables', '--site', 's1'], ['scan', '--site', 's1', '--table', 'stock']]) {
      const r = await hq(args[0]!, '--hq', missing, ...args.slice(1));
      expect(r.code, args[0]).toBe(1);
      expect(r.out, args[0]).toBe('');
      expect(r.err, args[0]).toBe(`tilstand: no HQ at ${missing}: the directory does not exist (check --hq; a site makes it at its first sync)\n`);
    }
  });

  it("refuses an argument it does not take ('proposals open' meant --status open), with exit 2", async () => {
    for (const [args, word] of [[['proposals', 'open', '--site', '7'], 'open'], [['sites', 'extra'], 'extra']] as const) {
      const r = await hq(args[0], '--hq', dir, ...args.slice(1));
      expect(r.code, args[0]).toBe(2); // was 0: every proposal listed, the word ignored
      expect(r.err, args[0]).toContain(`'hq ${args[0]}': unexpected argument '${word}'`);
    }
  });

  it("refuses an empty --out (an unset variable) rather than pulling into the current directory", async () => {
    for (const args of [['pull', '--site', '7'], ['export', '--site', '7', '--table', 'stock', '--format', 'csv']]) {
      const r = await hq(args[0]!, '--hq', dir, ...args.slice(1), '--out', '');
      expect([r.code, r.out, r.err], args[0]).toEqual([2, '', "tilstand: option '--out': expected a path, got ''\n"]);
    }
  });

  it('says so when no site has shipped to an HQ, and lists those that have', async () => {
    const empty = mkdtempSync(join(dir, 'empty-'));
    const none = await hq('sites', '--hq', empty);
    expect([none.code, none.out, none.err]).toEqual([0, '', `tilstand: no site has shipped to ${empty} yet\n`]);
    expect((await hq('sites', '--hq', empty, '--json')).out).toBe('[]\n');

    const fx = makeSite('7', { rows: 20 });
    try {
      const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(empty, { writePrefix: sitePrefix(fx.site) }), retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null });
      try {
        await e.enqueueSnapshotSync();
        for (let i = 0; i < 50 && e.status().pendingItems > 0; i++) {
          await e.runOnce();
          if (e.status().pendingItems > 0) await new Promise((r) => setTimeout(r, 10));
        }
        expect(e.status().pendingItems).toBe(0);
      } finally {
        await e.close();
      }
      // Each site with its tables and how current HQ's copy is: its newest synced commit.
      const newest = Math.max(...['stock', 'approval_inbox', 'decision_log'].map((t) => fx.table(t).latestSnapshot()?.timeMillis ?? 0));
      const some = await hq('sites', '--hq', empty);
      expect([some.code, some.err]).toEqual([0, '']);
      const lines = some.out.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^site +tables +state as of +behind$/);
      expect(lines.slice(1)).toHaveLength(1);
      expect(lines[1]).toMatch(new RegExp(`^7 +3 +${new Date(newest).toISOString().slice(0, 19).replace('T', ' ')}Z +\\d+ (s|min)$`));
      expect(JSON.parse((await hq('sites', '--hq', empty, '--json')).out)).toEqual([{ site: '7', tables: 3, stateAsOfMs: newest }]);
    } finally {
      rmSync(fx.data, { recursive: true, force: true });
    }
  });
});
