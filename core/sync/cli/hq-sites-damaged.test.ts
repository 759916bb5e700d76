// `tilstand hq sites` over a directory HQ where a table's snapshot JSON is damaged: corruption,
// exit 4, naming the file where it lies (its path under HQ's folder). It named the key alone
// (`site_x.db/stock/snapshot/snapshot-1`), relative to nothing the operator had typed.
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

describe('hq sites with a damaged snapshot JSON at a directory HQ', () => {
  it('reports corruption (exit 4) naming the file by its path', async () => {
    const fx = makeSite('sd', { rows: 5 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const path = join(hqDir, 'site_sd.db', 'stock', 'snapshot', 'snapshot-1');
    writeFileSync(path, readFileSync(path).subarray(0, 20));
    const r = await runCli(runHq, ['sites', '--hq', hqDir]);
    expect(r.code, r.err).toBe(4);
    expect(r.err).toContain(path);
  }, 60_000);
});
