// A reorder point set from the Stock screen (`Site.setReorderPolicy`): each policy's floor setting
// is its own (an item whose id holds a dot is no other item's location), and it is recorded under
// the person's name in the decision log before config.json changes: a crash (or a failed record)
// between the two must not leave a changed policy nobody is named for. The other way round it
// leaves at worst a record of a change the file does not hold, which the Stock screen does not
// show as anyone's (it names a setter only while config.json holds what they set).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { readConfigChanges } from '../inbox/index.ts';
import { localFileIO } from '../lsm/index.ts';
import { parseReorderPolicyKey, reorderPolicyKey } from './config.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };

let dir: string;
let data: string;
let site: Site | undefined;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-reorder-record-'));
  data = join(dir, 'site');
  await initDataDir({ data, site: 'north', scrypt: FAST });
  site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
}, 60_000);
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const configText = () => readFileSync(join(data, 'config.json'), 'utf8');

describe('a reorder point set from the floor', () => {
  it('leaves config.json as it was when the decision log cannot record who set it', () => {
    const s = site!;
    const before = configText();
    vi.spyOn(s.decisions!.inbox, 'recordConfigChange').mockImplementation(() => {
      throw new Error('decision log: no space left on device');
    });
    expect(() => s.setReorderPolicy('Lena', 'ITEM-001', null, { reorderPoint: 40, orderUpTo: 150 })).toThrow(/no space left/);
    expect(configText()).toBe(before);
    expect(s.config.agent.reorderByItem?.['ITEM-001']).toBeUndefined();
  });

  it('has the change in the decision log, under the name, when config.json is written', () => {
    const s = site!;
    const log = s.decisions!.inbox.logTable;
    const seenAtWrite: unknown[] = [];
    const replace = localFileIO.replaceAtomic.bind(localFileIO);
    vi.spyOn(localFileIO, 'replaceAtomic').mockImplementation((path, bytes) => {
      if (path === join(data, 'config.json')) seenAtWrite.push(readConfigChanges(log).map((c) => [c.user, c.key, c.after]));
      replace(path, bytes);
    });
    s.setReorderPolicy('Lena', 'ITEM-002', 'A-01', { reorderPoint: 9, orderUpTo: 30 });
    expect(seenAtWrite).toEqual([[['Lena', 'agent.reorderByItem.ITEM-002.locations.A-01', { reorderPoint: 9, orderUpTo: 30 }]]]);
    expect(JSON.parse(configText()).agent.reorderByItem['ITEM-002']).toEqual({ locations: { 'A-01': { reorderPoint: 9, orderUpTo: 30 } } });
  });

  it('says in the log when config.json cannot be written after the record, and changes nothing', () => {
    const s = site!;
    const before = configText();
    const replace = localFileIO.replaceAtomic.bind(localFileIO);
    vi.spyOn(localFileIO, 'replaceAtomic').mockImplementation((path, bytes) => {
      if (path === join(data, 'config.json')) throw new Error('ENOSPC: no space left on device');
      replace(path, bytes);
    });
    expect(() => s.setReorderPolicy('Lena', 'ITEM-003', null, { reorderPoint: 4, orderUpTo: 12 })).toThrow(/ENOSPC/);
    expect(configText()).toBe(before);
    expect(s.config.agent.reorderByItem?.['ITEM-003']).toBeUndefined();
    const log = readFileSync(join(data, 'logs', 'site.log'), 'utf8');
    expect(log).toMatch(/config agent\.reorderByItem\.ITEM-003: set by Lena in the decision log \(entry \d+\), but config\.json was not written: ENOSPC/);
  });

  it("keeps an item's setting apart from another item's at a location with the same words", () => {
    const s = site!;
    // Item `A.locations.B` and item `A` at location `B` had one key: Kari's setting of the second
    // was taken as who set the first.
    s.setReorderPolicy('Lena', 'A.locations.B', null, { reorderPoint: 3, orderUpTo: 9 });
    s.setReorderPolicy('Kari', 'A', 'B', { reorderPoint: 4, orderUpTo: 10 });
    expect(s.lastFloorSetting(reorderPolicyKey('A.locations.B', null))).toMatchObject({ user: 'Lena', after: { reorderPoint: 3, orderUpTo: 9 } });
    expect(s.lastFloorSetting(reorderPolicyKey('A', 'B'))).toMatchObject({ user: 'Kari', after: { reorderPoint: 4, orderUpTo: 10 } });
    expect(s.configChanges(2).map((c) => parseReorderPolicyKey(c.key))).toEqual([
      { item: 'A', location: 'B' },
      { item: 'A.locations.B', location: null },
    ]);
    expect(JSON.parse(configText()).agent.reorderByItem).toMatchObject({ 'A.locations.B': { reorderPoint: 3, orderUpTo: 9 }, A: { locations: { B: { reorderPoint: 4, orderUpTo: 10 } } } });
  });
});
