// A `--hq` of a scheme the commands do not take (`ftp://…`, `S3://…`) is refused as a usage error
// (hq-bad-input.test.ts) that shows the text as a target's text that does not parse is shown
// (core/sync/targets/open.ts): user info blanked, no query — it echoed `ftp://user:secret@…` whole.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { runHq } from './hq.ts';
import { runRestore } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-user-info-echo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EXPECTED = "option '--hq': expected a directory or s3://bucket/prefix?endpoint=…, got";

describe('--hq of another scheme is refused without its user info or query', () => {
  const cases: [string, string][] = [
    ['ftp://u:pw-secret@127.0.0.1/hq?token=q-secret', 'ftp://…@127.0.0.1/hq'],
    // A secret with a '/' and an '@' in it: blanked up to the last '@' before the query.
    ['S3://KEY:se/cr@et@bucket/p#frag', 'S3://…@bucket/p'],
    ['ftp://127.0.0.1/hq', 'ftp://127.0.0.1/hq'],
  ];

  it('tilstand hq', async () => {
    for (const [given, shown] of cases) {
      const r = await runCli(runHq, ['tables', '--hq', given, '--site', '7']);
      expect([r.code, r.out, r.err], given).toEqual([2, '', `tilstand: ${EXPECTED} '${shown}'\n`]);
      expect(r.err).not.toMatch(/secret|pw|cr@et|token|frag/);
    }
  });

  it('tilstand restore', async () => {
    for (const [given, shown] of cases) {
      const r = await runCli(runRestore, ['--data', join(dir, 'restored'), '--site', '7', '--hq', given]);
      expect([r.code, r.out, r.err], given).toEqual([2, '', `tilstand: ${EXPECTED} '${shown}'\n`]);
    }
  });
});
