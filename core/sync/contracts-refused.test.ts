// A contract file that cannot go to HQ (a name HQ's keys refuse, a name that is not UTF-8, a key the
// target refuses when sent) is left out and reported; the other contracts go, and the outbox does
// not grow with it round after round. Against a directory target (a mounted share).

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { contractsPrefix, sitePrefix } from './names.ts';
import { DirectoryTarget } from './targets/directory.ts';
import type { ObjectInfo, PutBody, PutMeta, SyncTarget } from './targets/target.ts';
import { makeSite, tempDir, type SiteFixture } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function setup(id: string, target?: (inner: DirectoryTarget) => SyncTarget) {
  const fx: SiteFixture = makeSite(id, { rows: 20 });
  const hq = tempDir('hq');
  cleanup.push(fx.data, hq);
  const logs: string[] = [];
  let now = Date.now();
  const inner = new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) });
  const e = new SyncEngine({
    dataDir: fx.data,
    site: fx.site,
    target: target ? target(inner) : inner,
    retry: { baseMs: 1, maxMs: 5, jitter: 0 },
    scheduledTags: null,
    clock: () => now,
    log: (l) => logs.push(l),
  });
  const contracts = join(fx.data, 'contracts');
  const atHq = (): string[] => {
    const dir = join(hq, contractsPrefix(fx.site));
    const walk = (d: string, rel: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((x) => (x.isDirectory() ? walk(join(d, x.name), `${rel}${x.name}/`) : [`${rel}${x.name}`]));
    try {
      return walk(dir, '').sort();
    } catch {
      return [];
    }
  };
  /** Plans and runs, `rounds` times, the clock a minute on each time. */
  const rounds = async (n: number) => {
    for (let i = 0; i < n; i++) {
      await e.enqueueSnapshotSync();
      for (let j = 0; j < 20 && e.status().pendingItems > 0; j++) await e.runOnce();
      now += 60_000;
    }
  };
  const contractRows = () => e.outbox.rows().filter((r) => r.unit.startsWith('contracts:'));
  return { fx, hq, e, logs, contracts, atHq, rounds, contractRows, advance: (ms: number) => (now += ms) };
}

describe('contracts HQ refuses', () => {
  it('a file whose name HQ refuses (a backslash, a control character) is left out and reported once; the other contracts go, and nothing is planned again for it', async () => {
    const s = setup('40');
    // As an archive made on Windows unpacks here: its folder separators become part of the name.
    writeFileSync(join(s.contracts, 'Scanner\\v1.json'), '{"name":"scanner"}');
    writeFileSync(join(s.contracts, 'Notes\n.txt'), 'line');
    mkdirSync(join(s.contracts, 'zone.pick'));
    writeFileSync(join(s.contracts, 'zone.pick', 'v1.json'), '{"name":"zone.pick","version":1}');

    await s.rounds(3);
    expect(s.atHq()).toEqual(['inventory.stock/v1.json', 'zone.pick/v1.json']);
    expect(s.contractRows().map((r) => r.state)).toEqual(['done', 'done']); // nothing cancelled, nothing planned each round
    const st = s.e.status();
    expect(st.lastError).toContain(`not sent contracts/Scanner\\\\v1.json: refused key '${contractsPrefix('40')}Scanner\\\\v1.json': backslash`);
    expect(st.lastError).toContain(`not sent contracts/Notes\\n.txt: refused key '${contractsPrefix('40')}Notes\\n.txt': control character`);
    expect(st.healthy).toBe(true);
    // Logged once each over the three rounds, not every round.
    expect(s.logs.filter((l) => l.includes('is not sent to HQ'))).toHaveLength(2);

    // Still refused a whole health window later: stalled, as a table that cannot be planned.
    s.advance(16 * 60_000);
    await s.rounds(1);
    expect(s.e.status().healthy).toBe(false);

    // Renamed by the operator: it goes, and the report clears.
    renameSync(join(s.contracts, 'Scanner\\v1.json'), join(s.contracts, 'scanner.json'));
    rmSync(join(s.contracts, 'Notes\n.txt'));
    await s.rounds(1);
    expect(s.atHq()).toEqual(['inventory.stock/v1.json', 'scanner.json', 'zone.pick/v1.json']);
    expect(s.e.status()).toMatchObject({ healthy: true, lastError: null, pendingItems: 0 });
    await s.e.close();
  });

  it('a name that is not UTF-8 is reported, and sync now still plans and sends the rest (the whole plan failed on it)', async () => {
    const s = setup('41');
    writeFileSync(Buffer.from(join(s.contracts, 'pr\xf8ve.json'), 'latin1'), '{}');
    const r = await s.e.syncNow(5);
    expect(r.status.pendingItems).toBe(0);
    expect(s.atHq()).toEqual(['inventory.stock/v1.json']);
    expect(r.status.lastError).toMatch(/^not sent contracts\/pr\ufffdve\.json: its name is not UTF-8/);
    await s.e.close();
  });

  it('a key the target refuses when sent cancels that contract alone; it is reported and not planned again', async () => {
    let refusedHeads = 0;
    const refuse = (key: string) => {
      if (key.endsWith('/b.json')) {
        refusedHeads++;
        throw new SyncError('InvalidArgument', `refused key '${key}': this store's rule`);
      }
    };
    const s = setup('42', (inner) => ({
      description: inner.description,
      put: (k: string, b: PutBody, m: PutMeta) => (refuse(k), inner.put(k, b, m)),
      putPointer: (k: string, b: Uint8Array) => (refuse(k), inner.putPointer(k, b)),
      list: (p: string) => inner.list(p),
      get: (k: string) => inner.get(k),
      head: async (k: string): Promise<ObjectInfo | undefined> => (refuse(k), inner.head(k)),
      remove: (k: string) => inner.remove(k),
      close: () => inner.close(),
    }));
    for (const n of ['a', 'b', 'c']) writeFileSync(join(s.contracts, `${n}.json`), n);
    await s.rounds(3);
    expect(s.atHq()).toEqual(['a.json', 'c.json', 'inventory.stock/v1.json']);
    expect(refusedHeads).toBe(1);
    expect(s.contractRows().map((r) => `${r.key!.slice(contractsPrefix('42').length)} ${r.state}`)).toEqual([
      'a.json done',
      'b.json cancelled',
      'c.json done',
      'inventory.stock/v1.json done',
    ]);
    expect(s.e.status().lastError).toBe(`not sent contracts/b.json: SyncError: refused key '${contractsPrefix('42')}b.json': this store's rule (rename the file; the other contracts go)`);
    expect(readFileSync(join(s.contracts, 'b.json'), 'utf8')).toBe('b');
    await s.e.close();
  });
  it('cancelled contract steps and finished ones a newer version replaced are forgotten after the keep time; the newest of each stays', async () => {
    const s = setup('43');
    await s.rounds(1);
    const file = join(s.contracts, 'inventory.stock', 'v1.json');
    writeFileSync(file, '{"name":"inventory.stock","version":1,"edited":1}');
    await s.rounds(1);
    // What an engine before planContracts left behind each round of a refused name: a whole batch cancelled.
    const key = `${contractsPrefix('43')}inventory.stock/v1.json`;
    for (let i = 0; i < 50; i++) {
      s.e.outbox.add([{ unit: `contracts:${i}`, phase: 3, op: 'pointer', key, body: Buffer.from('old'), size: 3, sha256: 'x', priority: 1 }], i);
      s.e.outbox.cancelUnit(`contracts:${i}`, 'refused key');
    }
    expect(s.contractRows()).toHaveLength(52);
    s.advance(2 * 3_600_000); // past outboxKeepMs (1 h)
    await s.rounds(1);
    expect(s.contractRows().map((r) => r.state)).toEqual(['done']);
    expect(s.contractRows()[0]!.body!.toString()).toContain('"edited":1');
    const before = s.e.outbox.rows().length;
    await s.rounds(2); // not planned again: the newest version is still known as sent
    expect(s.e.outbox.rows().length).toBe(before);
    expect(readFileSync(join(s.hq, key), 'utf8')).toContain('"edited":1');
    await s.e.close();
  });
  it('a refused contract does not hide why the other steps wait: HQ unreachable is reported beside it', async () => {
    const line = { up: true };
    const s = setup('44', (inner) => {
      const check = () => {
        if (!line.up) throw new SyncError('Transport', 'connect ENETUNREACH');
      };
      return {
        description: inner.description,
        put: async (k: string, b: PutBody, m: PutMeta) => (check(), inner.put(k, b, m)),
        putPointer: async (k: string, b: Uint8Array) => (check(), inner.putPointer(k, b)),
        list: async (p: string) => (check(), inner.list(p)),
        get: async (k: string) => (check(), inner.get(k)),
        head: async (k: string): Promise<ObjectInfo | undefined> => (check(), inner.head(k)),
        remove: async (k: string) => (check(), inner.remove(k)),
        close: () => inner.close(),
      };
    });
    writeFileSync(join(s.contracts, 'Scanner\\v1.json'), '{}');
    line.up = false;
    await s.rounds(1);
    const st = s.e.status();
    expect(st.pendingItems).toBeGreaterThan(0);
    expect(st.lastError).toMatch(/^not sent contracts\/Scanner\\\\v1\.json: refused key .*; SyncError: connect ENETUNREACH$/);
    await s.e.close();
  });
});
