// `tilstand start --hq <data>/warehouse` (or config.json's hq.target there) shipped the site's
// tables onto themselves: HQ's sender marker and the copies landed in the site's own warehouse.
// `tilstand sync now` refuses an HQ directory that is the data directory or inside it, compared as
// written and where both lead (core/sync cli `refuseHqInData`, realFolder); start and `config
// check` checked neither — not even as written. They refuse it now (ConfigError `--hq` /
// `hq.target`, exit 2), also through a symbolic link; `<data>/demo-hq`, the stand-in HQ a new demo
// syncs to, stays allowed.
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from './cli/test-support.ts';
import { ConfigError, hqInDataProblemWithin } from './config.ts';
import { DEMO_HQ_DIR } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-in-data-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const scrypt = { N: 1 << 10, r: 8, p: 1 };
const setTarget = (data: string, target: string) => {
  const file = join(data, 'config.json');
  const c = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, JSON.stringify({ ...c, hq: { target } }, null, 2));
};
const refusal = async (p: Promise<unknown>): Promise<ConfigError> => {
  const e = await p.then(
    (s) => {
      void (s as Site).stop();
      throw new Error('the site started');
    },
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(ConfigError);
  return e as ConfigError;
};

describe('an HQ directory in the data directory', () => {
  it('is refused by start (--hq and hq.target) and by config check, as written and through a link; nothing lands in the warehouse', async () => {
    const data = join(dir, 's1');
    await initDataDir({ data, site: 's1', scrypt });
    const link = join(dir, 'link-to-warehouse');
    symlinkSync(join(data, 'warehouse'), link);
    for (const hq of [join(data, 'warehouse'), data, link, join(link, 'hq')]) {
      const e = await refusal(Site.start({ data, hq, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: () => undefined }));
      expect([e.key, e.message], hq).toEqual(['--hq', expect.stringMatching(/is (inside )?the site's data directory.*HQ is a directory outside it/)]);
    }
    expect(existsSync(join(data, 'warehouse', 'site_s1.db', 'hq'))).toBe(false);
    expect(existsSync(join(data, 'warehouse', 'sites'))).toBe(false);

    setTarget(data, link);
    const checked = await runMain(['config', 'check', '--data', data]);
    expect([checked.code, checked.out]).toEqual([2, '']);
    expect(checked.err).toMatch(/config hq\.target: .*link-to-warehouse is inside the site's data directory/);
    const e = await refusal(Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: () => undefined }));
    expect(e.key).toBe('hq.target');
  }, 60_000);

  it('allows <data>/demo-hq (the demo’s stand-in HQ), also through a link to the data directory, and a directory outside', async () => {
    const data = join(dir, 's2');
    await initDataDir({ data, site: 's2', scrypt });
    const dataLink = join(dir, 'link-to-s2');
    symlinkSync(data, dataLink);
    for (const target of [join(data, DEMO_HQ_DIR), join(dataLink, DEMO_HQ_DIR), join(dir, 'hq-outside')]) {
      setTarget(data, target);
      const checked = await runMain(['config', 'check', '--data', data]);
      expect([checked.code, checked.err], target).toEqual([0, '']);
    }
    setTarget(data, join(data, DEMO_HQ_DIR));
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: () => undefined });
    await site.stop();
  }, 60_000);
});

describe('start resolves HQ\'s links off the event loop, within a wait', () => {
  // HQ's folder on a share that does not answer (a hard NFS mount whose server is down): the
  // synchronous resolve held the start, before the broker listened, for as long as the share hung.
  const hangs = (path: string): Promise<string> => (path.startsWith('/hq-share') ? new Promise<string>(() => {}) : Promise.resolve(path));

  it('a folder that does not answer is compared as written after the wait, and said', async () => {
    const said: string[] = [];
    const started = performance.now();
    const r = await hqInDataProblemWithin('/srv/tilstand-data', '/hq-share/warehouse', undefined, 200, (l) => said.push(l), hangs);
    expect(r).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('/hq-share/warehouse did not answer within 0.2 s');
  });

  it('refuses an HQ in the data directory as written even when the links do not resolve in time', async () => {
    const never = (): Promise<string> => new Promise<string>(() => {});
    const r = await hqInDataProblemWithin('/srv/tilstand-data', '/srv/tilstand-data/warehouse', undefined, 100, () => undefined, never);
    expect(r).toContain('is inside the site\'s data directory');
  });

  it('refuses one through a link when the links resolve', async () => {
    const data = join(dir, 'within-data');
    initDataDir({ data, site: 'north', admin: { name: 'admin', pin: '4827' }, scrypt });
    const link = join(dir, 'within-link');
    symlinkSync(join(data, 'warehouse'), link);
    const r = await hqInDataProblemWithin(data, link, DEMO_HQ_DIR, 2_000, () => undefined);
    expect(r).toContain('is inside the site\'s data directory');
  });
});
