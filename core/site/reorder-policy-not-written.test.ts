// A reorder point set from the Stock screen whose config.json write fails after the decision log
// recorded it (`Site.setReorderPolicy` records first, so a crash after the write cannot lose who
// set it). The record alone claimed a change config.json never held, and that claim travelled to
// HQ: a following entry under the same name now says the key kept its old value, and the Stock
// screen goes on naming whoever set the value the file holds — also after a restart.
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
  dir = mkdtempSync(join(tmpdir(), 'tilstand-reorder-not-written-'));
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

/** Makes config.json's next replace fail as a full disk does, before its rename. */
function failConfigWrite(): void {
  const replace = localFileIO.replaceAtomic.bind(localFileIO);
  vi.spyOn(localFileIO, 'replaceAtomic').mockImplementation((path, bytes) => {
    if (path === join(data, 'config.json')) throw new Error('ENOSPC: no space left on device');
    replace(path, bytes);
  });
}

describe('a reorder point whose config.json write fails after the record', () => {
  it('is followed in the decision log by an entry under the same name that puts the old value back', async () => {
    const key = reorderPolicyKey('ITEM-010', null);
    site!.setReorderPolicy('Kari', 'ITEM-010', null, { reorderPoint: 5, orderUpTo: 10 });
    const before = configText();
    failConfigWrite();
    expect(() => site!.setReorderPolicy('Lena', 'ITEM-010', null, { reorderPoint: 7, orderUpTo: 20 })).toThrow(/ENOSPC/);
    vi.restoreAllMocks();
    expect(configText()).toBe(before);

    // Newest first: the correction, the change that was not made, Kari's.
    const changes = readConfigChanges(site!.decisions!.inbox.logTable).filter((c) => c.key === key);
    expect(changes.map((c) => [c.user, c.before, c.after])).toEqual([
      ['Lena', { reorderPoint: 7, orderUpTo: 20 }, { reorderPoint: 5, orderUpTo: 10 }],
      ['Lena', { reorderPoint: 5, orderUpTo: 10 }, { reorderPoint: 7, orderUpTo: 20 }],
      ['Kari', null, { reorderPoint: 5, orderUpTo: 10 }],
    ]);
    const log = readFileSync(join(data, 'logs', 'site.log'), 'utf8');
    expect(log).toContain(`config ${key}: set by Lena in the decision log (entry ${changes[1]!.id}), but config.json was not written: ENOSPC: no space left on device; entry ${changes[0]!.id} records that it keeps its value`);

    // Kari set the value config.json holds: the Stock screen names her, not Lena.
    expect(site!.lastFloorSetting(key)).toMatchObject({ user: 'Kari', after: { reorderPoint: 5, orderUpTo: 10 } });
    await site!.stop();
    site = await Site.start({ data, ...START });
    expect(site.lastFloorSetting(key)).toMatchObject({ user: 'Kari', after: { reorderPoint: 5, orderUpTo: 10 } });
    // Both entries stay in the list of changes, as the log (and HQ) has them.
    expect(site.configChanges(3).map((c) => c.user)).toEqual(['Lena', 'Lena', 'Kari']);
  }, 60_000);

  it('adds no correction when config.json holds the new value after all (the replace failed after its rename)', () => {
    const key = reorderPolicyKey('ITEM-011', 'B-02');
    const replace = localFileIO.replaceAtomic.bind(localFileIO);
    vi.spyOn(localFileIO, 'replaceAtomic').mockImplementation((path, bytes) => {
      replace(path, bytes);
      if (path === join(data, 'config.json')) throw new Error('EIO: fsync of the directory failed');
    });
    expect(() => site!.setReorderPolicy('Lena', 'ITEM-011', 'B-02', { reorderPoint: 3, orderUpTo: 8 })).toThrow(/EIO/);
    vi.restoreAllMocks();
    const changes = readConfigChanges(site!.decisions!.inbox.logTable).filter((c) => c.key === key);
    expect(changes.map((c) => [c.user, c.after])).toEqual([['Lena', { reorderPoint: 3, orderUpTo: 8 }]]);
    expect(site!.lastFloorSetting(key)).toMatchObject({ user: 'Lena' });
    const log = readFileSync(join(data, 'logs', 'site.log'), 'utf8');
    expect(log).toContain(`config ${key}: set by Lena (entry ${changes[0]!.id}); config.json holds it, but its write failed: EIO: fsync of the directory failed`);
  });
});
