import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskBudget, Journal, JournalError, journalSink, parseEventTopic } from './journal.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-journal-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const ev = (i: number, receivedAtMs = 1000 + i) => ({
  topic: `tilstand/s1/events/inventory/stock`,
  payload: Buffer.from(`{"i":${i}}`),
  receivedAtMs,
  module: 'inventory',
  stream: 'stock',
  seq: i,
});

describe('Journal group commit', () => {
  it('commits many concurrent appends in fewer transactions, in order, and keeps them across reopen', async () => {
    const j = Journal.open(dir, { groupEventsMax: 300 });
    const N = 2000;
    const positions = await Promise.all(Array.from({ length: N }, (_, i) => j.append(ev(i))));
    const st = j.stats();
    expect(st.events).toBe(N);
    expect(st.commits).toBeLessThan(N);
    expect(st.commits).toBeGreaterThanOrEqual(Math.ceil(N / 300)); // the group bound holds
    expect(st.eventsPerCommitMax).toBeLessThanOrEqual(300);
    for (let i = 1; i < N; i++) expect(positions[i]! > positions[i - 1]!).toBe(true);
    j.close();

    const j2 = Journal.open(dir);
    const all = [...j2.readAfter(0n)];
    expect(all.length).toBe(N);
    expect(all.map((e) => e.position)).toEqual(positions);
    expect(all[7]!.payload.toString()).toBe('{"i":7}');
    expect(all[7]!.seq).toBe(7n);
    expect([...j2.readAfter(positions[N - 11]!, 5)].map((e) => e.position)).toEqual(positions.slice(N - 10, N - 5));
    const next = await j2.append(ev(N));
    expect(next > positions[N - 1]!).toBe(true);
    j2.close();
  });

  it('bounds a group by bytes', async () => {
    const j = Journal.open(dir, { groupBytesMax: 10_000 });
    const big = Buffer.alloc(3000, 1);
    await Promise.all(Array.from({ length: 10 }, (_, i) => j.append({ ...ev(i), payload: big })));
    expect(j.stats().eventsPerCommitMax).toBeLessThanOrEqual(3);
    j.close();
  });

  it('keeps checkpoints', () => {
    const j = Journal.open(dir);
    expect(j.getCheckpoint('lsm')).toBeUndefined();
    j.setCheckpoint('lsm', 42n);
    j.setCheckpoint('lsm', 43n);
    j.close();
    const j2 = Journal.open(dir);
    expect(j2.getCheckpoint('lsm')).toBe(43n);
    j2.close();
  });
});

describe('Journal.prune', () => {
  it('deletes by age and by bytes but never after keepAfter, and never reuses positions', async () => {
    let now = 10_000;
    const j = Journal.open(dir, { nowMs: () => now, pruneBatchRows: 7 });
    const pos = await Promise.all(Array.from({ length: 100 }, (_, i) => j.append(ev(i, 1000 + i))));
    // every entry is older than maxAgeMs, but keepAfter protects everything after pos[49]
    expect((await j.prune({ maxAgeMs: 1, keepAfter: pos[49]! })).deletedRows).toBe(50);
    expect([...j.readAfter(0n)][0]!.position).toBe(pos[50]);
    // a byte budget of ~10 rows removes the oldest rows down to it
    const r = await j.prune({ maxBytes: 10 * (9 + 34 + 48), keepAfter: pos[99]! });
    expect(r.deletedRows).toBe(40);
    expect([...j.readAfter(0n)].map((e) => e.position)).toEqual(pos.slice(90));
    // delete everything, then append: the position still grows
    now = 1e9;
    await j.prune({ maxAgeMs: 1, keepAfter: pos[99]! });
    expect([...j.readAfter(0n)].length).toBe(0);
    j.close();
    const j2 = Journal.open(dir);
    expect((await j2.append(ev(1))) > pos[99]!).toBe(true);
    j2.close();
  });
});

describe('Journal errors and budget', () => {
  it('names the file when journal.db is corrupt', () => {
    const path = join(dir, 'journal.db');
    writeFileSync(path, Buffer.alloc(8192, 0x5a));
    expect(() => Journal.open(dir)).toThrowError(JournalError);
    try {
      Journal.open(dir);
    } catch (err) {
      expect((err as JournalError).kind).toBe('Corruption');
      expect((err as Error).message).toContain(path);
    }
  });

  // Found by the corruption suite (seed 1045885937): a flipped serial-type byte turned a cell
  // into another type; the row was read back with a NULL payload instead of refused.
  it.each([
    ['a missing CRC', 'UPDATE journal SET crc = NULL WHERE position = 2'],
    ['a payload that became text', "UPDATE journal SET payload = 'x' WHERE position = 2"],
    ['a topic that became a number', 'UPDATE journal SET topic = 7 WHERE position = 2'],
    ['a CRC that became a real', 'UPDATE journal SET crc = crc + 0.5 WHERE position = 2'],
  ])('refuses a row whose cell changed type: %s', async (_what, sql) => {
    const j = Journal.open(dir);
    await Promise.all([j.append(ev(1)), j.append(ev(2)), j.append(ev(3))]);
    j.close();
    const db = new Database(join(dir, 'journal.db'));
    db.exec(sql);
    db.close();
    const again = Journal.open(dir);
    try {
      expect(() => [...again.readAfter(0n)]).toThrowError(/corruption in .*journal\.db/);
      expect([...again.readAfter(0n, 1)].map((e) => e.payload.toString())).toEqual(['{"i":1}']);
    } finally {
      again.close();
    }
  });

  it.each([
    ['a renamed table', 'ALTER TABLE journal RENAME TO journak'],
    ['a renamed column', 'ALTER TABLE journal RENAME COLUMN position TO posithon'],
  ])('refuses a file whose schema was damaged (%s) instead of starting an empty journal', async (_what, sql) => {
    const j = Journal.open(dir);
    await j.append(ev(1));
    j.close();
    const db = new Database(join(dir, 'journal.db'));
    db.exec(sql);
    db.close();
    expect(() => Journal.open(dir)).toThrowError(/journal\.db is corrupt \(open\): unexpected/);
  });

  it('reads rows written before the CRC column existed, and checks every row after', async () => {
    const path = join(dir, 'journal.db');
    const old = new Database(path);
    old.exec(`CREATE TABLE journal (position INTEGER PRIMARY KEY, received_at_ms INTEGER NOT NULL, module TEXT NOT NULL,
      stream TEXT NOT NULL, seq INTEGER, topic TEXT NOT NULL, payload BLOB NOT NULL, size_bytes INTEGER NOT NULL);
      CREATE TABLE checkpoint (name TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO meta VALUES ('format', 'tilstand-journal-1');
      INSERT INTO journal VALUES (1, 5, 'inventory', 'stock', NULL, 't', x'7b7d', 50);`);
    old.close();
    const j = Journal.open(dir);
    await j.append(ev(2));
    expect([...j.readAfter(0n)].map((e) => e.position)).toEqual([1n, 2n]);
    j.close();
    const db = new Database(path);
    db.exec('UPDATE journal SET crc = NULL WHERE position = 2');
    db.close();
    const again = Journal.open(dir);
    try {
      expect(() => [...again.readAfter(0n)]).toThrowError(/no checksum \(position 2\)/);
    } finally {
      again.close();
    }
  });

  it('rejects bad options with expected/got', () => {
    expect(() => Journal.open(dir, { groupEventsMax: 0 })).toThrow(/groupEventsMax: expected a positive integer, got 0/);
  });

  it('is readable from a second connection once append resolved (WAL, committed)', async () => {
    const j = Journal.open(dir);
    const p = await j.append(ev(1));
    const other = new Database(join(dir, 'journal.db'), { readonly: true });
    expect(other.prepare('SELECT count(*) AS n FROM journal WHERE position = ?').get(p)).toEqual({ n: 1 });
    other.close();
    j.close();
  });

  it('DiskBudget says full over the journal budget or under free space, with hysteresis', () => {
    let used = 0;
    let free = 1e9;
    let now = 0;
    const b = new DiskBudget({
      journal: { bytesUsed: () => used, path: join(dir, 'journal.db') },
      journalBytesMax: 1000,
      diskFreeBytesMin: 100,
      checkIntervalMs: 10,
      nowMs: () => now,
      freeBytes: () => free,
    });
    expect(b.full()).toBe(false);
    used = 1000;
    expect(b.full()).toBe(false); // cached within checkIntervalMs
    now += 10;
    expect(b.full()).toBe(true);
    used = 950;
    now += 10;
    expect(b.full()).toBe(true); // hysteresis: must fall under 90%
    used = 800;
    now += 10;
    expect(b.full()).toBe(false);
    free = 50;
    now += 10;
    expect(b.full()).toBe(true);
  });

  it('journalSink parses event topics', async () => {
    expect(parseEventTopic('tilstand/s1/events/ops/work/items')).toEqual({ site: 's1', module: 'ops', stream: 'work/items' });
    expect(parseEventTopic('tilstand/s1/acks/ops')).toBeUndefined();
    const j = Journal.open(dir);
    const pos = await journalSink(j, () => 5)('tilstand/s1/events/ops/work', Buffer.from('x'));
    const [e] = [...j.readAfter(pos - 1n)];
    expect(e).toMatchObject({ module: 'ops', stream: 'work', receivedAtMs: 5, seq: null });
    j.close();
  });
});
