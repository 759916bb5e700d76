// `tilstand hq pull` of a site with a table named `__proto__` or `constructor` (valid table names).
// The pull record (pull-record.ts, `pulled.json`) kept tables as members of a plain object: the
// record of `__proto__` set the object's prototype and was never written, and a table without a
// record read `Object.prototype`'s `constructor` as its record. The next pull took every snapshot,
// tag and schema file of those tables for the analyst's own writes and refused (exit 3).
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RowKind } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, tempDir } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('hq pull of tables named __proto__ and constructor', () => {
  it('records them, and a pull again goes on (exit 0)', async () => {
    const fx = makeSite('proto', { rows: 5 });
    const hqDir = tempDir('hq');
    const dest = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, join(dest, '..'));
    for (const name of ['__proto__', 'constructor']) {
      fx.catalog.createTable({ database: 'site_proto', table: name }, { fields: [{ name: 'k', type: 'STRING' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1' } });
      const w = fx.table(name).newWriter();
      w.write(['a', 1], RowKind.INSERT);
      w.commit();
      w.close();
    }
    await shipToDirectory(fx.data, fx.site, hqDir);
    const pull = () => runCli(runHq, ['pull', '--hq', hqDir, '--site', 'proto', '--out', dest]);
    const first = await pull();
    expect([first.code, first.err.includes('tilstand:')], first.err).toEqual([0, false]);
    const record = JSON.parse(readFileSync(join(dest, 'site_proto.db', '.tilstand', 'pulled.json'), 'utf8')) as object;
    expect(Object.keys(record)).toEqual(expect.arrayContaining(['__proto__', 'constructor']));
    const again = await pull();
    expect([again.code, again.err.includes('tilstand:')], again.err).toEqual([0, false]);
  }, 60_000);
});
