// `tilstand hq pull` of a site whose snapshot, tag or schema JSON at HQ is damaged (a torn write
// on the share, a disk error): it copied the file into the pulled warehouse and exited 0, so the
// copy held a snapshot no reader could open, and said it was HQ's. A damaged file is corruption,
// exit 4, naming the file at HQ, and the damaged bytes are not written into the copy.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

describe('hq pull of a damaged snapshot, tag or schema JSON at HQ', () => {
  for (const [what, rel] of [
    ['snapshot', 'snapshot/snapshot-1'],
    ['tag', 'tag/tag-t1'],
    ['schema', 'schema/schema-0'],
  ] as const) {
    it(`reports a damaged ${what} as corruption (exit 4) and does not copy it`, async () => {
      const fx = makeSite(`d${what}`, { rows: 5 });
      const hqDir = tempDir('hq');
      const dest = join(tempDir('pulled'), 'warehouse');
      cleanup.push(fx.data, hqDir, join(dest, '..'));
      fx.table('stock').createTag('t1');
      await shipToDirectory(fx.data, fx.site, hqDir);
      const key = `site_d${what}.db/stock/${rel}`;
      const atHq = join(hqDir, ...key.split('/'));
      const good = readFileSync(atHq);
      writeFileSync(atHq, good.subarray(0, Math.floor(good.length / 2))); // torn
      const r = await runCli(runHq, ['pull', '--hq', hqDir, '--site', `d${what}`, '--out', dest]);
      expect(r.code, r.err).toBe(4);
      expect(r.err).toContain(key);
      const local = join(dest, ...key.split('/'));
      expect(existsSync(local) && readFileSync(local).length < good.length).toBe(false);
    }, 60_000);
  }
});

// JSON that parses but is no schema (a file overwritten with other JSON): corruption too. It used
// to throw a plain TypeError, which is no damage to the pull's check, and the file was copied.
describe('hq pull of a schema JSON of the wrong shape at HQ', () => {
  for (const [what, text] of [
    ['null', 'null'],
    ['fields a number', null],
  ] as const) {
    it(`reports a schema that is ${what} as corruption (exit 4) and does not copy it`, async () => {
      const site = `ds${what === 'null' ? 'n' : 'f'}`;
      const fx = makeSite(site, { rows: 5 });
      const hqDir = tempDir('hq');
      const dest = join(tempDir('pulled'), 'warehouse');
      cleanup.push(fx.data, hqDir, join(dest, '..'));
      await shipToDirectory(fx.data, fx.site, hqDir);
      const key = `site_${site}.db/stock/schema/schema-0`;
      const atHq = join(hqDir, ...key.split('/'));
      const good = readFileSync(atHq, 'utf8');
      writeFileSync(atHq, text ?? JSON.stringify({ ...(JSON.parse(good) as object), fields: 3 }));
      const r = await runCli(runHq, ['pull', '--hq', hqDir, '--site', site, '--out', dest]);
      expect(r.code, r.err).toBe(4);
      expect(r.err).toContain(key);
      expect(existsSync(join(dest, ...key.split('/')))).toBe(false);
    }, 60_000);
  }
});
