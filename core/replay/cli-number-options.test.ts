// A bad number option of `replay run` and `replay diff` is named as every other bad option of the
// `tilstand` commands is, `option '--…': …`: these said `--min-agreement: expected …`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replayCli } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-replay-number-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('replay number options', () => {
  it("a bad value is refused as option '--<name>', exit 2", async () => {
    for (const [args, err] of [
      [['replay', 'diff', dir, dir, '--out', join(dir, 'd'), '--min-agreement', '2'], "option '--min-agreement': expected a number from 0 to 1, got '2'"],
      [['replay', 'diff', dir, dir, '--out', join(dir, 'd'), '--max-changed', '-1'], `option '--max-changed': expected an integer from 0 to ${Number.MAX_SAFE_INTEGER}, got '-1'`],
      [['replay', 'diff', dir, dir, '--out', join(dir, 'd'), '--examples', 'x'], "option '--examples': expected an integer from 0 to 1000, got 'x'"],
      [['replay', 'run', '--fixture', dir, '--out', join(dir, 'o'), '--tick-ms', '0'], "option '--tick-ms': expected an integer from 1 to 60000, got '0'"],
    ] as const) {
      const r = await replayCli([...args]);
      expect.soft([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', `tilstand: ${err}\n`]);
    }
  });
});
