// `tilstand sync status|now` and `tilstand restore` take only their own flags: one meant for a
// sibling (`sync status --max-rounds 3`, `sync now --force`, `restore --max-rounds 2`) is refused
// naming it, with exit 2, before the data directory or HQ is looked at — it used to be accepted
// and ignored, so the command ran without what was asked. And each hq command's usage line shows
// the flags it takes (`hq export` left out its read point).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { HQ_FLAGS, hqUsage } from './hq.ts';
import { runRestore, runSync, SYNC_FLAGS } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// Neither a site nor an HQ there: a refused flag must be found before either is looked at (that
// would be exit 1).
const missingData = join(dir, 'no-such-site');
const missingHq = join(dir, 'no-such-hq');

/** Runs `tilstand <command> <args>` (command: `sync status`, `sync now` or `restore`). */
const run = (command: string, args: string[]) => (command === 'restore' ? runCli(runRestore, args) : runCli(runSync, [command.split(' ')[1]!, ...args]));

// What each command takes (its usage line; --access-key/--secret-key with every command that reaches HQ).
const TAKES: Record<string, readonly string[]> = {
  'sync status': ['data', 'json'],
  'sync now': ['data', 'hq', 'access-key', 'secret-key', 'json', 'max-rounds', 'take-over', 'hq-on-this-disk'],
  restore: ['data', 'hq', 'site', 'access-key', 'secret-key', 'json', 'force', 'fall-back-to-tag'],
};
const SWITCHES = new Set(['json', 'force', 'take-over', 'hq-on-this-disk', 'fall-back-to-tag']);
/** A flag as a person would give it: a switch alone, a string flag with a plausible value. */
const given = (flag: string) => (SWITCHES.has(flag) ? [`--${flag}`] : [`--${flag}`, flag === 'max-rounds' ? '3' : flag === 'site' ? '7' : join(dir, flag)]);

describe('tilstand sync and restore refuse a flag their command does not take', () => {
  it('names the flag and the command, exit 2, nothing on stdout', async () => {
    const cases: [string, string[], string][] = [
      // Was exit 1 "…/site.db does not exist": --max-rounds taken and ignored.
      ['sync status', ['--data', missingData, '--max-rounds', '3'], '--max-rounds'],
      ['sync status', ['--data', missingData, '--hq', missingHq], '--hq'],
      // Was exit 1 "cannot read …/config.json": --force taken and ignored.
      ['sync now', ['--data', missingData, '--force'], '--force'],
      ['sync now', ['--data', missingData, '--site', '7'], '--site'],
      // Was a restore run with --max-rounds ignored.
      ['restore', ['--data', missingData, '--hq', missingHq, '--site', '7', '--max-rounds', '2'], '--max-rounds'],
    ];
    for (const [command, args, flag] of cases) {
      const r = await run(command, args);
      const what = `${command} ${args.join(' ')}`;
      expect([r.code, r.out], what).toEqual([2, '']);
      expect(r.err, what).toMatch(new RegExp(`^tilstand: unknown option '${flag}' for '${command}' \\(options: --data, `));
    }
    expect(existsSync(missingData), 'a refused restore made the data directory').toBe(false);
  });

  it('every flag of every command is refused by the commands that do not take it', async () => {
    const all = new Set(Object.values(TAKES).flat());
    let checked = 0;
    for (const [command, own] of Object.entries(TAKES)) {
      for (const flag of all) {
        if (own.includes(flag)) continue;
        // The command's required flags too, so that without the refusal it would go on and run.
        const base = command === 'restore' ? ['--data', missingData, '--hq', missingHq, '--site', '7'] : ['--data', missingData];
        const r = await run(command, [...base, ...given(flag)]);
        expect([r.code, r.out, r.err.split(' (options')[0]], `${command} --${flag}`).toEqual([2, '', `tilstand: unknown option '--${flag}' for '${command}'`]);
        checked++;
      }
    }
    // status refuses 9 (hq, access-key, secret-key, max-rounds, take-over, hq-on-this-disk, site, force, fall-back-to-tag), now 3, restore 3.
    expect(checked).toBe(15);
    expect(existsSync(missingData), 'a refused restore made the data directory').toBe(false);
  });

  it('takes its own flags, and SYNC_FLAGS is what the usage says', async () => {
    for (const [command, own] of Object.entries(TAKES)) {
      expect(Object.keys(SYNC_FLAGS[command as keyof typeof SYNC_FLAGS]).sort(), command).toEqual([...own].sort());
    }
    // Parsed and accepted: each command goes on to find no site or no HQ there (exit 1), not a usage error.
    const status = await run('sync status', ['--data', missingData, '--json']);
    expect([status.code, status.err]).toEqual([1, `tilstand: ${join(missingData, 'site.db')} does not exist (is ${missingData} a site's data directory?)\n`]);
    const now = await run('sync now', ['--data', missingData, '--hq', missingHq, '--access-key', 'k', '--secret-key', 's', '--json', '--max-rounds', '2']);
    expect([now.code, now.err.split(':').slice(0, 2).join(':')]).toEqual([1, `tilstand: cannot read ${join(missingData, 'config.json')}`]);
    const restore = await run('restore', ['--data', join(dir, 'restored'), '--hq', missingHq, '--site', '7', '--json', '--force']);
    expect(restore.code, restore.err).toBe(1);
    expect(restore.err).not.toMatch(/unknown option/);
    // The keys are taken, and refused with a directory HQ, which uses none (keys-with-directory.test.ts).
    const keys = await run('restore', ['--data', join(dir, 'restored'), '--hq', missingHq, '--site', '7', '--access-key', 'k', '--secret-key', 's']);
    expect([keys.code, keys.err]).toEqual([2, expect.stringMatching(/^tilstand: option '--access-key', '--secret-key': .*which takes no S3 keys/)]);
  });
});

describe('tilstand sync now and restore refuse an empty key', () => {
  it("names the option, exit 2, before HQ is reached (an unset variable: the environment's keys were used in its place)", async () => {
    const s3 = 's3://bucket/prefix?endpoint=http://127.0.0.1:1&region=r';
    for (const [command, args] of [
      ['restore', ['--data', missingData, '--hq', s3, '--site', '7', '--access-key', '', '--secret-key', 's']],
      ['restore', ['--data', missingData, '--hq', s3, '--site', '7', '--access-key', 'k', '--secret-key', ' ']],
    ] as const) {
      const r = await run(command, [...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(/option '--(access|secret)-key': expected the S3 (access|secret) key/);
    }
    expect(existsSync(missingData), 'a refused restore made the data directory').toBe(false);
  });
});

describe('tilstand sync and restore usage', () => {
  it("each command's usage names every flag it takes", async () => {
    for (const [command, own] of Object.entries(TAKES)) {
      // The command's lines as `--help` prints them (continuations included).
      const r = await run(command, ['--help']);
      expect(r.code, command).toBe(0);
      for (const flag of own) {
        // `sync now` and `restore` left out --access-key and --secret-key, which they take.
        expect(r.out, `${command} --${flag}`).toMatch(new RegExp(`--${flag}\\b`));
      }
    }
  });
});

describe('tilstand hq usage', () => {
  it("each command's usage line names every flag it takes, besides how HQ is reached", () => {
    const connection = new Set(['hq', 'access-key', 'secret-key', 'cache']);
    for (const [sub, flags] of Object.entries(HQ_FLAGS)) {
      const line = hqUsage.find((l) => l.startsWith(`  tilstand hq ${sub} `));
      expect(line, sub).toBeDefined();
      for (const flag of Object.keys(flags)) {
        if (connection.has(flag)) continue;
        // `export` left out --tag|--snapshot|--at, which it takes (as `scan` does).
        expect(line, `hq ${sub} --${flag}`).toMatch(new RegExp(`--${flag}\\b`));
      }
    }
  });
});
