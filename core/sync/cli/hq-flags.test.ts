// `tilstand hq <command>` takes only its own flags: one meant for another hq command (`hq pull
// --format csv`, `hq scan --out rows.csv`) is refused naming it, with exit 2, before HQ is read —
// it used to be accepted and ignored, so the command ran without what was asked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { hqUsage, runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// No HQ there: a refused flag must be found before HQ is looked at (that would be exit 1).
const missingHq = join(dir, 'no-such-hq');
const hq = (...args: string[]) => runCli(runHq, args);

// What each command takes besides --hq, --access-key, --secret-key and --cache (its usage line).
const TAKES: Record<string, readonly string[]> = {
  sites: ['json'],
  tables: ['site', 'json'],
  tags: ['site', 'table', 'json'],
  scan: ['site', 'table', 'tag', 'snapshot', 'at', 'format'],
  diff: ['site', 'table', 'from', 'from-snapshot', 'from-at', 'to', 'to-snapshot', 'to-at', 'format'],
  proposals: ['site', 'status', 'format'],
  pull: ['site', 'out'],
  export: ['site', 'table', 'tag', 'snapshot', 'at', 'format', 'out'],
};

describe('tilstand hq refuses a flag its command does not take', () => {
  it('names the flag and the command, exit 2, nothing on stdout', async () => {
    const cases: [string[], string][] = [
      [['pull', '--site', '7', '--out', join(dir, 'w'), '--format', 'parquet'], '--format'],
      [['pull', '--site', '7', '--out', join(dir, 'w'), '--table', 'stock'], '--table'],
      [['scan', '--site', '7', '--table', 'stock', '--out', join(dir, 'rows.csv')], '--out'],
      [['scan', '--site', '7', '--table', 'stock', '--json'], '--json'],
      [['scan', '--site', '7', '--table', 'stock', '--status', 'open'], '--status'],
      [['sites', '--site', '7'], '--site'],
      [['tables', '--site', '7', '--table', 'stock'], '--table'],
      [['tags', '--site', '7', '--table', 'stock', '--format', 'csv'], '--format'],
      [['diff', '--site', '7', '--table', 'stock', '--from', 'a', '--to', 'b', '--tag', 'a'], '--tag'],
      [['proposals', '--site', '7', '--table', 'stock'], '--table'],
      [['export', '--site', '7', '--table', 'stock', '--format', 'csv', '--out', join(dir, 'x.csv'), '--from', 'a'], '--from'],
    ];
    for (const [args, flag] of cases) {
      const r = await hq(args[0]!, '--hq', missingHq, ...args.slice(1));
      expect([r.code, r.out], args.join(' ')).toEqual([2, '']);
      // Was exit 1 (no HQ there) after parsing: the flag was taken and ignored.
      expect(r.err, args.join(' ')).toMatch(new RegExp(`^tilstand: unknown option '${flag}' for 'hq ${args[0]}' \\(options: --hq, `));
    }
  });

  it('every flag of every hq command is refused by the commands that do not take it', async () => {
    const all = new Set(Object.values(TAKES).flat());
    let checked = 0;
    for (const [sub, own] of Object.entries(TAKES)) {
      for (const flag of all) {
        if (own.includes(flag)) continue;
        const r = await hq(sub, '--hq', missingHq, `--${flag}=x`);
        expect([r.code, r.out, r.err.split(' (options')[0]], `${sub} --${flag}`).toEqual([2, '', `tilstand: unknown option '--${flag}' for 'hq ${sub}'`]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it('takes the flags that say how HQ is reached with every command, and the usage shows each command its own', async () => {
    for (const sub of Object.keys(TAKES)) {
      // Parsed and accepted: the command goes on to find no HQ there (exit 1), not a usage error.
      const r = await hq(sub, '--hq', missingHq, '--cache', join(dir, 'cache'));
      expect([r.code, r.err], sub).toEqual([1, `tilstand: no HQ at ${missingHq}: the directory does not exist (check --hq; a site makes it at its first sync)\n`]);
      // The keys are taken too, and refused with a directory, which uses none (keys-with-directory.test.ts).
      const keys = await hq(sub, '--hq', missingHq, '--access-key', 'k', '--secret-key', 's');
      expect([keys.code, keys.err], sub).toEqual([2, expect.stringMatching(/^tilstand: option '--access-key', '--secret-key': .*which takes no S3 keys/)]);
      const help = await hq(sub, '--help');
      // Its own line, then how HQ is reached (hq-unknown-site.test.ts checks every flag is shown).
      expect([help.code, help.out.startsWith(`usage:\n${hqUsage.find((l) => l.startsWith(`  tilstand hq ${sub} `))}\n`)], sub).toEqual([0, true]);
      expect(help.out, sub).toContain('[--access-key <key> --secret-key <secret>] [--cache <dir>]');
      expect(help.out.split('\n').filter((l) => l.startsWith('  tilstand hq ')), sub).toHaveLength(1);
    }
    // The flags a command takes that its usage used to leave out.
    expect(hqUsage.find((l) => l.startsWith('  tilstand hq tables '))).toContain('[--json]');
    expect(hqUsage.find((l) => l.startsWith('  tilstand hq tags '))).toContain('[--json]');
    expect(hqUsage.find((l) => l.startsWith('  tilstand hq diff '))).toContain('[--format jsonl|csv]');
  });
});
