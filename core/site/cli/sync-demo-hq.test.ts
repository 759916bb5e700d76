// `tilstand sync now` on a demo's data directory with the site stopped: the demo syncs to
// <data>/demo-hq (hq.target, DESIGN.md's data directory layout), a folder of the data directory by
// design. The refusal of an HQ inside the data directory (core/sync, for `--hq <data>/warehouse`)
// took it for one too: exit 2, "demo-hq is inside the site's data directory". It ships there as the
// running demo does; the data directory itself and its other folders are still refused.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { DEMO_CONTRACTS, DEMO_EXTRA_MODULES, DEMO_HQ_DIR, demoConfig } from '../demo/site.ts';
import { initDataDir } from '../init.ts';
import { runSiteSync } from './site-commands.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-demo-hq-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sync = (...args: string[]) => runCli((argv, io) => runSiteSync(argv, io), args);

describe('sync now on a stopped demo directory', () => {
  it('ships to <data>/demo-hq, its hq.target; the data directory and its warehouse are still refused', async () => {
    const data = join(dir, 'demo');
    // As Site.start makes a new demo directory (site.ts): hq.target = <data>/demo-hq.
    await initDataDir({ data, site: 'demo', config: (c) => demoConfig(c, join(data, DEMO_HQ_DIR)), admin: { name: 'demo', pin: '1234' }, modules: DEMO_EXTRA_MODULES, contracts: DEMO_CONTRACTS, demoRule: true, scrypt: { N: 1 << 10, r: 8, p: 1 } });
    const r = await sync('now', '--data', data);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(existsSync(join(data, DEMO_HQ_DIR, 'site_demo.db'))).toBe(true);
    for (const hq of [data, join(data, 'warehouse'), join(data, 'demo-hq-2')]) {
      const refused = await sync('now', '--data', data, '--hq', hq);
      expect([refused.code, refused.out], hq).toEqual([2, '']);
      expect(refused.err, hq).toContain("the site's data directory");
    }
  }, 60_000);
});
