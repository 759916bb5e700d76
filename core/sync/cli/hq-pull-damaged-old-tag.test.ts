// `tilstand hq pull` of a site one of whose OLD tags is damaged at HQ (a torn write on the share,
// a disk error): the whole pull failed on that tag (exit 4) and the analyst got nothing — not the
// latest snapshot, nor the other tags. Now the rest is pulled, the damaged tag is not written into
// the copy, and it is named as corruption on stderr with exit 4 (never silently skipped).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, tempDir, writeStock } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('hq pull of a site with a damaged old tag at HQ', () => {
  it('pulls the latest snapshot and the other tags, names the damaged tag as corruption, exit 4', async () => {
    const fx = makeSite('dold', { rows: 5 });
    const hqDir = tempDir('hq');
    const dest = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, join(dest, '..'));
    fx.table('stock').createTag('old');
    writeStock(fx, 5, 10, 2);
    fx.table('stock').createTag('recent');
    await shipToDirectory(fx.data, fx.site, hqDir);
    const key = 'site_dold.db/stock/tag/tag-old';
    const atHq = join(hqDir, ...key.split('/'));
    const good = readFileSync(atHq);
    writeFileSync(atHq, good.subarray(0, Math.floor(good.length / 2))); // torn
    const r = await runCli(runHq, ['pull', '--hq', hqDir, '--site', 'dold', '--out', dest]);
    expect(r.code, r.err).toBe(4);
    expect(r.err).toContain(atHq);
    expect(r.err).toMatch(/damaged|corruption/);
    expect(r.out).toContain('pulled site dold');
    // The damaged bytes are not in the copy; the rest is, and reads.
    expect(existsSync(join(dest, ...key.split('/')))).toBe(false);
    const t = new Catalog(dest).getTable({ database: 'site_dold', table: 'stock' });
    expect(t.scanRows({})).toEqual(fx.table('stock').scanRows({}));
    expect(existsSync(join(dest, 'site_dold.db', 'stock', 'tag', 'tag-recent'))).toBe(true);
    expect(new Catalog(dest).listTables('site_dold').sort()).toEqual(['approval_inbox', 'decision_log', 'stock']);
    // HQ's tag mended, the next pull copies it (the copy is not refused as the analyst's own).
    writeFileSync(atHq, good);
    const again = await runCli(runHq, ['pull', '--hq', hqDir, '--site', 'dold', '--out', dest]);
    expect(again.code, again.err).toBe(0);
    expect(readFileSync(join(dest, ...key.split('/')))).toEqual(good);
  }, 60_000);
});
