// A reorder point set from the Stock screen whose decision-log commit fails (a full disk, a
// read-only mount): `Site.setReorderPolicy` records first and writes config.json only once the
// record is committed, so the file keeps its value. But the log's writer holds an entry it took
// for its next commit (core/inbox appendLog: "counts as written"): once the disk had room again,
// the next decision committed the claim that Lena set the reorder point — a change config.json
// never held, with nothing after it saying so — and it travelled to HQ and into
// `tilstand config changes`, and after a restart the list of changes named her for it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { readConfigChanges } from '../inbox/index.ts';
import { localFileIO } from '../lsm/index.ts';
import { reorderPolicyKey } from './config.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
const START = { mqttPort: 0, httpPort: 0, ui: false, agentTimer: false } as const;

let dir: string;
let data: string;
let site: Site | undefined;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-reorder-log-fails-'));
  data = join(dir, 'site');
  await initDataDir({ data, site: 'north', scrypt: FAST });
  site = await Site.start({ data, ...START });
}, 60_000);
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const configText = () => readFileSync(join(data, 'config.json'), 'utf8');

/** Makes every new file of the decision log fail as on a full disk. */
function failLogWrites(): void {
  const writeNew = localFileIO.writeNew.bind(localFileIO);
  vi.spyOn(localFileIO, 'writeNew').mockImplementation((path, bytes) => {
    if (path.includes('/decision_log/')) throw new Error(`write ${path} failed: ENOSPC: no space left on device`);
    writeNew(path, bytes);
  });
}

describe('a reorder point whose decision-log commit fails', () => {
  it('leaves config.json as it was, and the claim followed by its correction once the disk has room', async () => {
    const key = reorderPolicyKey('ITEM-020', null);
    site!.setReorderPolicy('Kari', 'ITEM-020', null, { reorderPoint: 5, orderUpTo: 10 });
    const before = configText();
    failLogWrites();
    expect(() => site!.setReorderPolicy('Lena', 'ITEM-020', null, { reorderPoint: 7, orderUpTo: 20 })).toThrow(/ENOSPC/);
    vi.restoreAllMocks();
    expect(configText()).toBe(before);
    expect(site!.lastFloorSetting(key)).toMatchObject({ user: 'Kari', after: { reorderPoint: 5, orderUpTo: 10 } });

    // The disk has room again: the next change commits what the log's writer held.
    site!.setReorderPolicy('Kari', 'ITEM-021', null, { reorderPoint: 1, orderUpTo: 2 });
    const changes = readConfigChanges(site!.decisions!.inbox.logTable).filter((c) => c.key === key);
    expect(changes.map((c) => [c.user, c.before, c.after])).toEqual([
      ['Lena', { reorderPoint: 7, orderUpTo: 20 }, { reorderPoint: 5, orderUpTo: 10 }],
      ['Lena', { reorderPoint: 5, orderUpTo: 10 }, { reorderPoint: 7, orderUpTo: 20 }],
      ['Kari', null, { reorderPoint: 5, orderUpTo: 10 }],
    ]);
    // Kari set the value config.json holds: the Stock screen names her, now and after a restart.
    expect(site!.lastFloorSetting(key)).toMatchObject({ user: 'Kari', after: { reorderPoint: 5, orderUpTo: 10 } });
    expect(site!.configChanges(4).map((c) => [c.user, c.key])).toEqual([
      ['Kari', reorderPolicyKey('ITEM-021', null)],
      ['Lena', key],
      ['Lena', key],
      ['Kari', key],
    ]);
    await site!.stop();
    site = await Site.start({ data, ...START });
    expect(site.lastFloorSetting(key)).toMatchObject({ user: 'Kari', after: { reorderPoint: 5, orderUpTo: 10 } });
    const log = readFileSync(join(data, 'logs', 'site.log'), 'utf8');
    expect(log).toContain(`config ${key}: set by Lena, but the decision log could not record it: write `);
    expect(log).toMatch(/config\.json was not written, the value stays; recording that it keeps its value failed too \(write .*ENOSPC.*\); both go into the log's next commit/);
  }, 60_000);

  it('follows the claim with its correction at once when the log takes the correction', () => {
    const key = reorderPolicyKey('ITEM-022', 'A-01');
    const before = configText();
    const writeNew = localFileIO.writeNew.bind(localFileIO);
    let failures = 1;
    vi.spyOn(localFileIO, 'writeNew').mockImplementation((path, bytes) => {
      if (path.includes('/decision_log/') && failures-- > 0) throw new Error('ENOSPC: no space left on device');
      writeNew(path, bytes);
    });
    expect(() => site!.setReorderPolicy('Lena', 'ITEM-022', 'A-01', { reorderPoint: 3, orderUpTo: 9 })).toThrow(/ENOSPC/);
    vi.restoreAllMocks();
    expect(configText()).toBe(before);
    const changes = readConfigChanges(site!.decisions!.inbox.logTable).filter((c) => c.key === key);
    expect(changes.map((c) => [c.user, c.before, c.after])).toEqual([
      ['Lena', { reorderPoint: 3, orderUpTo: 9 }, null],
      ['Lena', null, { reorderPoint: 3, orderUpTo: 9 }],
    ]);
    expect(site!.lastFloorSetting(key)).toBeUndefined();
    const log = readFileSync(join(data, 'logs', 'site.log'), 'utf8');
    expect(log).toContain(`config ${key}: set by Lena, but the decision log could not record it: ENOSPC: no space left on device; config.json was not written, the value stays; the entry after it records that it keeps its value`);
  });

  it('names the setter of the value held after a restart that came before any look at the list', async () => {
    const key = reorderPolicyKey('ITEM-023', null);
    site!.setReorderPolicy('Kari', 'ITEM-023', null, { reorderPoint: 2, orderUpTo: 4 });
    failLogWrites();
    expect(() => site!.setReorderPolicy('Lena', 'ITEM-023', null, { reorderPoint: 6, orderUpTo: 12 })).toThrow(/ENOSPC/);
    vi.restoreAllMocks();
    await site!.stop();
    site = await Site.start({ data, ...START });
    // Whether the stop committed what the log's writer held or not, Kari set the value config.json holds.
    expect(site.lastFloorSetting(key)).toMatchObject({ user: 'Kari', after: { reorderPoint: 2, orderUpTo: 4 } });
    const changes = readConfigChanges(site.decisions!.inbox.logTable).filter((c) => c.key === key);
    expect(changes.map((c) => c.user)).toEqual(changes.length === 1 ? ['Kari'] : ['Lena', 'Lena', 'Kari']);
  }, 60_000);
});
