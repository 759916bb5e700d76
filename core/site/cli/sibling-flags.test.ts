// The site's command groups (`config`, `contracts`, `deadletters`, `users`, `modules`) take, per
// subcommand, only that subcommand's flags: one meant for a sibling (`users list --role admin`,
// `deadletters replay --note x`, `config check --limit 5`) is refused naming it, with exit 2,
// before the data directory is looked at — it used to be accepted and ignored, so the command ran
// without what was asked. `sync now` through the dispatcher (which asks a running site) likewise,
// and `start`'s demo flags without `--demo`.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { siteUsage } from './site-commands.ts';
import { runMain as run } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sibling-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// No site there: a refused flag must be found before the directory is looked at (that is exit 1).
const missing = join(dir, 'no-such-site');
const notASite = `tilstand: ${missing} is not a Tilstand data directory (no config.json); run \`tilstand init --data ${missing} --site <id>\` first\n`;

// What each subcommand takes (its usage line).
const TAKES: Record<string, Record<string, readonly string[]>> = {
  config: { check: ['data', 'json'], reload: ['data'], changes: ['data', 'limit', 'json'] },
  contracts: { list: ['data', 'json'], add: ['data', 'file'] },
  deadletters: { list: ['data', 'status', 'limit', 'json'], replay: ['data', 'id', 'alike'], dismiss: ['data', 'id', 'user', 'pin', 'note', 'alike'] },
  users: { list: ['data', 'json'], add: ['data', 'name', 'role', 'pin', 'password', 'badge'], disable: ['data', 'name'], enable: ['data', 'name'], reset: ['data', 'name', 'pin', 'password'] },
  modules: { list: ['data'], password: ['data', 'module'] },
};
const SWITCHES = new Set(['json', 'alike']);
// A value each flag could take, so that a flag is refused for being a sibling's, not for its value.
const VALUES: Record<string, string> = { limit: '5', status: 'open', id: '17', user: 'ada', pin: '4831', note: 'why', name: 'ada', role: 'operator', password: 'a long password', badge: 'b-1', module: 'wms', file: join(dir, 'c.json') };
const given = (flag: string) => (SWITCHES.has(flag) ? [`--${flag}`] : [`--${flag}`, VALUES[flag] ?? join(dir, flag)]);

describe("the site's commands refuse a flag their subcommand does not take", () => {
  it('names the flag and the subcommand, exit 2, nothing on stdout', async () => {
    const cases: [string[], string][] = [
      // Was exit 1 (no site there) after parsing: the flag was taken and ignored.
      [['users', 'list', '--role', 'admin'], '--role'],
      [['users', 'disable', '--name', 'ada', '--pin', '4831'], '--pin'],
      [['config', 'check', '--limit', '5'], '--limit'],
      [['config', 'reload', '--json'], '--json'],
      [['contracts', 'add', '--file', join(dir, 'c.json'), '--json'], '--json'],
      // A replay does not filter by status: `--status dismissed` would replay every open letter.
      [['deadletters', 'replay', '--status', 'dismissed'], '--status'],
      [['deadletters', 'list', '--id', '17'], '--id'],
      [['deadletters', 'replay', '--id', '17', '--note', 'mended'], '--note'],
      [['modules', 'list', '--module', 'wms'], '--module'],
    ];
    for (const [args, flag] of cases) {
      const r = await run([...args, '--data', missing]);
      const what = args.join(' ');
      expect([r.code, r.out], what).toEqual([2, '']);
      expect(r.err, what).toMatch(new RegExp(`^tilstand: unknown option '${flag}' for '${args[0]} ${args[1]}' \\(options: --data`));
    }
  });

  it('every flag of a group is refused by the subcommands that do not take it', async () => {
    let checked = 0;
    for (const [group, subs] of Object.entries(TAKES)) {
      const all = new Set(Object.values(subs).flat());
      for (const [sub, own] of Object.entries(subs)) {
        for (const flag of all) {
          if (own.includes(flag)) continue;
          const r = await run([group, sub, '--data', missing, ...given(flag)]);
          expect([r.code, r.out, r.err.split(' (options')[0]], `${group} ${sub} --${flag}`).toEqual([2, '', `tilstand: unknown option '--${flag}' for '${group} ${sub}'`]);
          checked++;
        }
      }
    }
    expect(checked).toBe(39);
  });

  it('takes its own flags, and the usage line of each subcommand shows them', async () => {
    for (const [group, subs] of Object.entries(TAKES)) {
      for (const [sub, own] of Object.entries(subs)) {
        // Parsed and accepted: the command goes on to find no site there (exit 1), not a usage error.
        const r = await run([group, sub, ...own.flatMap((f) => (f === 'data' ? ['--data', missing] : given(f)))]);
        expect([r.code, r.out, r.err], `${group} ${sub}`).toEqual([1, '', notASite]);
        const line = siteUsage.find((l) => l.startsWith(`  tilstand ${group} ${sub} `));
        expect(line, `${group} ${sub}`).toBeDefined();
        // `contracts list` and `users list` did not show --json, which they take.
        for (const f of own) expect(line, `${group} ${sub} --${f}`).toMatch(new RegExp(`--${f}\\b`));
      }
    }
  });

  it('an unknown or missing subcommand is still refused naming the subcommands, and --help prints the group usage', async () => {
    const bogus = await run(['config', 'frob', '--data', missing, '--limit', '5']);
    expect([bogus.code, bogus.out, bogus.err]).toEqual([2, '', "tilstand: expected: tilstand config check|reload|changes [--data <dir>], got 'frob'\n"]);
    // Any of the group's flags parses with --help, whichever subcommand takes it.
    const help = await run(['deadletters', '--help', '--note', 'x', '--limit', '5']);
    expect([help.code, help.err]).toEqual([0, '']);
    expect(help.out).toContain('tilstand deadletters dismiss');
  });
});

describe('tilstand sync through the dispatcher (a running site is asked for `sync now`)', () => {
  it("refuses another command's flag, naming it", async () => {
    for (const [args, flag, command] of [
      // Was exit 1 "cannot read …/config.json": --force (restore's) taken and ignored.
      [['sync', 'now', '--data', missing, '--force'], '--force', 'sync now'],
      [['sync', 'now', '--data', missing, '--site', '7'], '--site', 'sync now'],
      [['sync', 'status', '--data', missing, '--max-rounds', '3'], '--max-rounds', 'sync status'],
      [['restore', '--data', missing, '--hq', join(dir, 'hq'), '--site', '7', '--max-rounds', '3'], '--max-rounds', 'restore'],
    ] as const) {
      const r = await run([...args]);
      expect([r.code, r.out, r.err.split(' (options')[0]], args.join(' ')).toEqual([2, '', `tilstand: unknown option '${flag}' for '${command}'`]);
    }
  });
});

describe('tilstand start', () => {
  it('refuses the demo modules\' --demo-seed and --demo-step-ms without --demo, before a site or the first-run screen starts', async () => {
    const fresh = join(dir, 'start-fresh');
    for (const [flag, value] of [['--demo-seed', '5'], ['--demo-step-ms', '100']] as const) {
      // `--mqtt-port none` after it: without the refusal this is refused for the port (else it would serve the first-run screen).
      const r = await run(['start', '--data', fresh, flag, value, '--mqtt-port', 'none']);
      expect([r.code, r.out, r.err], flag).toEqual([2, '', `tilstand: option '${flag}' sets the simulated modules of a demo site: give --demo with it, or leave it out\n`]);
    }
    expect(existsSync(fresh)).toBe(false);
    // With --demo they are parsed as before (here the port is refused next).
    const demo = await run(['start', '--data', fresh, '--demo', '--demo-seed', '5', '--demo-step-ms', '100', '--mqtt-port', 'none']);
    expect([demo.code, demo.err]).toEqual([2, "tilstand: option '--mqtt-port': expected a port number from 0 to 65535, got 'none'\n"]);
    const help = await run(['start', '--help']);
    expect(help.out).toContain('[--demo [--demo-seed <n>] [--demo-step-ms <ms>]]');
  });
});
