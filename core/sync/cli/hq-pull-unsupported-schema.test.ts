// `tilstand hq pull` copies a site's files byte for byte into a warehouse of the user's choice
// (read there by any Paimon engine), and ignores HQ's data format mark: a copy does not need to
// understand what it copies. The check of HQ's schema JSON before it is written (damaged: exit 4)
// let through only what this program's reader supports: a schema a newer site wrote — a merge
// engine or a column type this version does not know — failed the pull with the reader's own
// complaint, exit 2 ("option 'merge-engine': expected one of …", as if the command line were
// wrong), where the pull had copied it and exited 0. A file that reads as a schema is no damaged
// file: it is copied as before; a torn one is still refused (hq-pull-damaged.test.ts).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, tempDir } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

type SchemaJson = { fields: { id: number; name: string; type: string }[]; highestFieldId: number; options: Record<string, string> };

describe('hq pull of a schema this program does not support (a newer site wrote it)', () => {
  for (const [what, change] of [
    ['a merge engine it does not know', (s: SchemaJson) => void (s.options = { ...s.options, 'merge-engine': 'some-future-engine' })],
    [
      'a column type it does not read',
      (s: SchemaJson) => {
        s.highestFieldId += 1;
        s.fields.push({ id: s.highestFieldId, name: 'seen_ns', type: 'TIMESTAMP(9)' });
      },
    ],
  ] as const) {
    it(`${what}: copied as it is, exit 0`, async () => {
      const site = what.startsWith('a merge') ? 'nsmerge' : 'nstype';
      const fx = makeSite(site, { rows: 3 });
      const hqDir = tempDir('hq');
      const dest = join(tempDir('pulled'), 'warehouse');
      cleanup.push(fx.data, hqDir, join(dest, '..'));
      await shipToDirectory(fx.data, fx.site, hqDir);
      const key = `site_${site}.db/stock/schema/schema-0`;
      const atHq = join(hqDir, ...key.split('/'));
      const schema = JSON.parse(readFileSync(atHq, 'utf8')) as SchemaJson;
      change(schema);
      const newer = Buffer.from(JSON.stringify(schema, null, 2));
      writeFileSync(atHq, newer);
      const r = await runCli(runHq, ['pull', '--hq', hqDir, '--site', site, '--out', dest]);
      expect(r.code, r.err).toBe(0);
      expect(readFileSync(join(dest, ...key.split('/'))).equals(newer)).toBe(true);
    }, 60_000);
  }
});
