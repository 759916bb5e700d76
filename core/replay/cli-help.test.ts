// `tilstand replay <command> --help` prints that command's usage to stdout, exit 0, as every other
// `tilstand` command does (it went to stderr, so `… --help | less` showed nothing). That every flag
// a replay command takes is in its usage is checked with all commands in
// core/site/cli/usage-flags.test.ts.

import { describe, expect, it } from 'vitest';
import { replayCli } from './test-support.ts';

describe('replay --help', () => {
  it('each subcommand prints its usage line to stdout, nothing to stderr, exit 0', async () => {
    for (const sub of ['export', 'run', 'diff']) {
      const r = await replayCli(['replay', sub, '--help']);
      expect([r.code, r.err], sub).toEqual([0, '']);
      expect(r.out, sub).toMatch(new RegExp(`^usage:\\n {2}tilstand replay ${sub} (?:--[a-z]|<)`));
      expect(r.out.trimEnd().split('\n'), sub).toHaveLength(2);
    }
  });

  it('shows every option of run and diff (tick-ms, scratch, keep-scratch, examples, force)', async () => {
    const run = await replayCli(['replay', 'run', '--help']);
    for (const flag of ['--tick-ms <ms>', '--scratch <dir>', '[--keep-scratch]', '[--progress]']) expect(run.out).toContain(flag);
    const diff = await replayCli(['replay', 'diff', '--help']);
    for (const flag of ['[--examples <n>]', '[--force]']) expect(diff.out).toContain(flag);
  });
});
