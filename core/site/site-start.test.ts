// Site.start and the site's maintenance on the edges of a data directory: a broker password file
// that cannot be read, a logs folder that is gone, a clock that stepped back.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { Ingestor } from '../ingest/ingestor.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-start-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

it('refuses to start with a broker.passwordFile it cannot read, naming the key', async () => {
  const data = join(dir, 'ext');
  await initDataDir({
    data,
    site: 'ext',
    scrypt: FAST,
    config: (c) => ({ ...c, broker: { mode: 'external', url: 'mqtt://127.0.0.1:1', username: 'tilstand', passwordFile: 'secrets/broker.pw' } }),
  });
  const e = await Site.start({ data, httpPort: 0, ui: false, agentTimer: false }).then(
    async (s) => (await s.stop(), new Error('started')),
    (err: Error) => err,
  );
  expect(e.message).toMatch(/^config broker\.passwordFile: cannot read .*broker\.pw/);
});

it('makes the logs folder when it is gone, so the run has its logs/site.log', async () => {
  const data = join(dir, 'd');
  await initDataDir({ data, site: 'logs1', scrypt: FAST });
  rmSync(join(data, 'logs'), { recursive: true });
  const lines: string[] = [];
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => lines.push(l) });
  await site.stop();
  expect(lines.filter((l) => l.includes('cannot be written'))).toEqual([]);
  expect(existsSync(join(data, 'logs', 'site.log'))).toBe(true);
});

it('purges closed dead letters again after the clock stepped back, not a step later', async () => {
  const purge = vi.spyOn(Ingestor.prototype, 'purgeClosedDeadLetters');
  const data = join(dir, 'purge');
  await initDataDir({ data, site: 'purge', scrypt: FAST });
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  try {
    await site.pruneNow();
    expect(purge).toHaveBeenCalledTimes(1);
    const at = Date.now();
    // The clock steps back a day; then 61 minutes pass.
    const now = vi.spyOn(Date, 'now').mockImplementation(() => at - 86_400_000 + 61 * 60_000);
    await site.pruneNow();
    now.mockRestore();
    expect(purge).toHaveBeenCalledTimes(2);
  } finally {
    await site.stop();
  }
});
