import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskBudget, groupRowCrc, Journal, JOURNAL_FORMAT, JournalError, journalSink, parseEventTopic, type JournalEntry } from './journal.ts';

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

/** Appends `sizes[k]` events as one group each (one tick per group); returns every position. */
async function appendGroups(j: Journal, sizes: number[], at: (i: number) => number = (i) => 1000 + i): Promise<bigint[]> {
  const out: bigint[] = [];
  let i = 0;
  for (const n of sizes) {
    out.push(...(await Promise.all(Array.from({ length: n }, () => j.append(ev(++i, at(i)))))));
  }
  return out;
}

type GroupRow = { first_position: bigint; event_count: bigint; received_min_ms: bigint; received_max_ms: bigint; size_bytes: bigint; crc: bigint; events: Buffer };
function groupRows(): GroupRow[] {
  const db = new Database(join(dir, 'journal.db'), { readonly: true });
  db.defaultSafeIntegers(true);
  try {
    return db.prepare('SELECT * FROM journal_groups ORDER BY first_position').all() as GroupRow[];
  } finally {
    db.close();
  }
}

/** Runs `f` on a second connection to journal.db (the journal itself must be closed). */
function poke(f: (db: Database.Database) => void): void {
  const db = new Database(join(dir, 'journal.db'));
  db.defaultSafeIntegers(true);
  try {
    f(db);
  } finally {
    db.close();
  }
}

/** Rewrites one group row with its CRC recomputed, so only the framing check can catch the damage. */
function rewriteGroup(first: bigint, change: (r: GroupRow) => void): void {
  poke((db) => {
    const r = db.prepare('SELECT * FROM journal_groups WHERE first_position = ?').get(first) as GroupRow;
    change(r);
    const crc = groupRowCrc(Number(r.first_position), Number(r.event_count), Number(r.received_min_ms), Number(r.received_max_ms), Number(r.size_bytes), r.events);
    db.prepare('UPDATE journal_groups SET event_count = ?, received_min_ms = ?, received_max_ms = ?, size_bytes = ?, crc = ?, events = ? WHERE first_position = ?').run(
      r.event_count, r.received_min_ms, r.received_max_ms, r.size_bytes, BigInt(crc), r.events, first,
    );
  });
}

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
    for (let i = 1; i < N; i++) expect(positions[i]).toBe(positions[i - 1]! + 1n); // consecutive
    j.close();
    expect(groupRows().length).toBe(st.commits); // one row per group commit

    const j2 = Journal.open(dir);
    const all = [...j2.readAfter(0n)];
    expect(all.length).toBe(N);
    expect(all.map((e) => e.position)).toEqual(positions);
    expect(all[7]!.payload.toString()).toBe('{"i":7}');
    expect(all[7]!.seq).toBe(7n);
    expect([...j2.readAfter(positions[N - 11]!, 5)].map((e) => e.position)).toEqual(positions.slice(N - 10, N - 5));
    const next = await j2.append(ev(N));
    expect(next).toBe(positions[N - 1]! + 1n);
    j2.close();
  });

  it('bounds a group by bytes', async () => {
    const j = Journal.open(dir, { groupBytesMax: 10_000 });
    const big = Buffer.alloc(3000, 1);
    await Promise.all(Array.from({ length: 10 }, (_, i) => j.append({ ...ev(i), payload: big })));
    expect(j.stats().eventsPerCommitMax).toBeLessThanOrEqual(3);
    j.close();
  });

  // The WAL is checkpointed every ~4 MB whatever the page size: a new file's 16 KiB pages (fewer
  // WAL frames per group) must not stretch the interval to 1000 pages = 16 MB, and a file created
  // with 4 KiB pages keeps them (SQLite cannot change it in WAL mode) and its 4 MB interval.
  for (const existing4k of [false, true]) {
    it(`checkpoints every ~4 MB of WAL with ${existing4k ? "an existing file's 4 KiB" : "a new file's 16 KiB"} pages, across reopen`, async () => {
      const path = join(dir, 'journal.db');
      if (existing4k) {
        const db = new Database(path);
        db.pragma('page_size = 4096');
        db.pragma('journal_mode = WAL');
        db.close();
      }
      const walBytes = () => statSync(`${path}-wal`).size;
      const payload = Buffer.alloc(4000, 7);
      let i = 0;
      let walMax = 0;
      for (let pass = 0; pass < 2; pass++) {
        const j = Journal.open(dir);
        for (let g = 0; g < 40; g++) {
          await Promise.all(Array.from({ length: 100 }, () => j.append({ ...ev(++i), payload })));
          walMax = Math.max(walMax, walBytes());
        }
        j.close();
      }
      const db = new Database(path, { readonly: true });
      expect(db.pragma('page_size', { simple: true })).toBe(existing4k ? 4096 : 16384);
      db.close();
      // 32 MB appended over two opens; one group is ~0.4 MB, so a checkpoint every ~4 MB keeps the WAL under 6 MB.
      expect(walMax).toBeGreaterThan(3_000_000);
      expect(walMax).toBeLessThan(6_000_000);
      const j = Journal.open(dir);
      expect([...j.readAfter(0n)].length).toBe(i);
      j.close();
    });
  }

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

  it('stores one row per group: first position, count, receive-time range, size, CRC, framed events (format 3)', async () => {
    const j = Journal.open(dir);
    await appendGroups(j, [5, 1, 7], (i) => 2000 - i);
    j.close();
    const rows = groupRows();
    expect(rows.map((r) => [r.first_position, r.event_count, r.received_min_ms, r.received_max_ms])).toEqual([
      [1n, 5n, 1995n, 1999n],
      [6n, 1n, 1994n, 1994n],
      [7n, 7n, 1987n, 1993n],
    ]);
    for (const r of rows) {
      expect(Number(r.size_bytes)).toBeGreaterThan(r.events.length);
      expect(Number(r.crc)).toBe(groupRowCrc(Number(r.first_position), Number(r.event_count), Number(r.received_min_ms), Number(r.received_max_ms), Number(r.size_bytes), r.events));
      // compact: payload + a few bytes per event; topic, module and stream once per group
      expect(r.events.length).toBeLessThan(Number(r.event_count) * 16 + 60);
    }
    poke((db) => expect(db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get()).toBe(JOURNAL_FORMAT));
  });

  it('round-trips every field: sequences of every kind, Unicode strings, empty payloads, many topics in one group', async () => {
    const j = Journal.open(dir);
    const seqs: Array<number | bigint | undefined> = [undefined, 0, 1, 127, 128, -1, -300, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 60, 2n ** 62n, -(2n ** 63n), 2n ** 63n - 1n, 5n];
    const events = Array.from({ length: 60 }, (_, i) => ({
      topic: `tilstand/sø/events/mødul${i % 40}/strøm/${i % 3}`,
      module: `mødul${i % 40}`,
      stream: i % 7 === 0 ? '' : `strøm/${i % 3}`,
      payload: i % 11 === 0 ? Buffer.alloc(0) : Buffer.from(`{"x":"${'€'.repeat(i)}","i":${i}}`),
      receivedAtMs: i % 5 === 0 ? -1_000_000 - i : 1_700_000_000_000 + i * 1.7,
      ...(seqs[i % seqs.length] === undefined ? {} : { seq: seqs[i % seqs.length] }),
    }));
    const positions = await Promise.all(events.map((e) => j.append(e)));
    expect(j.stats().commits).toBe(1);
    j.close();
    const again = Journal.open(dir);
    const got = [...again.readAfter(0n)];
    again.close();
    expect(got.length).toBe(60);
    got.forEach((g: JournalEntry, i) => {
      const e = events[i]!;
      expect(g.position).toBe(positions[i]);
      expect(g.topic).toBe(e.topic);
      expect(g.module).toBe(e.module);
      expect(g.stream).toBe(e.stream);
      expect(g.payload.equals(e.payload)).toBe(true);
      expect(g.receivedAtMs).toBe(Math.trunc(e.receivedAtMs));
      expect(g.seq).toBe(e.seq === undefined ? null : BigInt(e.seq));
    });
  });

  it('readAfter starts anywhere, also inside a group, pages across groups and does not hold the connection', async () => {
    const j = Journal.open(dir, { readPageRows: 3 });
    const pos = await appendGroups(j, [10, 10, 10, 10, 10, 10, 10, 10, 10, 10]);
    expect([...j.readAfter(pos[14]!)].map((e) => e.position)).toEqual(pos.slice(15));
    expect([...j.readAfter(pos[14]!, 7)].map((e) => e.position)).toEqual(pos.slice(15, 22));
    expect([...j.readAfter(pos[9]!, 1)].map((e) => e.position)).toEqual([pos[10]]);
    expect([...j.readAfter(pos[99]!)]).toEqual([]);
    expect([...j.readAfter(0n, 0)]).toEqual([]);
    expect([...j.readAfter(-5n, 2)].map((e) => e.position)).toEqual([1n, 2n]);
    // Between two pages the connection is free: an append commits, and the reader sees it at the end.
    const it = j.readAfter(pos[90]!);
    const seen = [it.next().value!.position, it.next().value!.position];
    const extra = await j.append(ev(1000));
    for (const e of it) seen.push(e.position);
    expect(seen).toEqual([...pos.slice(91), extra]);
    j.close();
  });

  it('refuses invalid events alone, naming the field; the rest of the group commits', async () => {
    const j = Journal.open(dir);
    const results = await Promise.allSettled([
      j.append(ev(1)),
      j.append({ ...ev(2), receivedAtMs: Number.NaN }),
      j.append({ ...ev(3), seq: 1.5 }),
      j.append({ ...ev(4), seq: 2n ** 63n }),
      j.append({ ...ev(5), payload: 'x' as unknown as Buffer }),
      j.append(ev(6)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/receivedAtMs/);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/seq/);
    expect((results[3] as PromiseRejectedResult).reason).toBeInstanceOf(JournalError);
    expect([...j.readAfter(0n)].map((e) => e.payload.toString())).toEqual(['{"i":1}', '{"i":6}']);
    expect([...j.readAfter(0n)].map((e) => e.position)).toEqual([1n, 2n]);
    j.close();
  });
});

describe('Journal.prune', () => {
  it('deletes whole groups by age and by bytes but never an event after keepAfter, and never reuses positions', async () => {
    let now = 10_000;
    const j = Journal.open(dir, { nowMs: () => now, pruneBatchRows: 7 });
    const pos = await appendGroups(j, Array(10).fill(10)); // positions 1..100 in groups of 10
    // every event is older than maxAgeMs, but keepAfter = pos[54] sits inside the 6th group (51..60):
    // that group stays whole, the five before it go
    expect((await j.prune({ maxAgeMs: 1, keepAfter: pos[54]! })).deletedRows).toBe(50);
    expect([...j.readAfter(0n)][0]!.position).toBe(pos[50]);
    // by age: only groups whose every event is older go (received 1000 + position; the threshold
    // 1066 takes 51..60, but not 61..70 although 61..65 are older)
    now = 1066 + 1000;
    expect((await j.prune({ maxAgeMs: 1000, keepAfter: pos[99]! })).deletedRows).toBe(10);
    expect([...j.readAfter(0n)][0]!.position).toBe(pos[60]);
    j.close();
    const sizes = groupRows().map((r) => Number(r.size_bytes));
    expect(sizes.length).toBe(4);
    const j2 = Journal.open(dir, { nowMs: () => now, pruneBatchRows: 7 });
    // a byte budget of the newest three groups removes the older ones down to it
    const budget = sizes.slice(-3).reduce((a, b) => a + b, 0);
    expect((await j2.prune({ maxBytes: budget, keepAfter: pos[99]! })).deletedRows).toBe(10);
    expect([...j2.readAfter(0n)].map((e) => e.position)).toEqual(pos.slice(70));
    // delete everything, then append: the position still grows
    now = 1e9;
    expect((await j2.prune({ maxAgeMs: 1, keepAfter: pos[99]! })).deletedRows).toBe(30);
    expect([...j2.readAfter(0n)].length).toBe(0);
    j2.close();
    const j3 = Journal.open(dir);
    expect(j3.lastPosition()).toBe(pos[99]);
    expect(await j3.append(ev(1))).toBe(pos[99]! + 1n);
    j3.close();
  });

  it('a reader paging while prune removes what it has not read yet continues after the pruned groups', async () => {
    const j = Journal.open(dir, { readPageRows: 5 });
    const pos = await appendGroups(j, Array(10).fill(10));
    const it = j.readAfter(0n);
    const seen: bigint[] = [];
    for (let k = 0; k < 12; k++) seen.push(it.next().value!.position);
    expect((await j.prune({ maxAgeMs: 0, keepAfter: pos[49]! })).deletedRows).toBe(50);
    for (const e of it) seen.push(e.position);
    // the page already fetched (groups starting before 16) is still returned; then 51.. follow
    expect(seen).toEqual([...pos.slice(0, 20), ...pos.slice(50)]);
    j.close();
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
    ['a missing CRC', 'UPDATE journal_groups SET crc = NULL WHERE first_position = 2'],
    ['events that became text', "UPDATE journal_groups SET events = 'x' WHERE first_position = 2"],
    ['an event count that became text', "UPDATE journal_groups SET event_count = 'three' WHERE first_position = 2"],
    ['a CRC that became a real', 'UPDATE journal_groups SET crc = crc + 0.5 WHERE first_position = 2'],
    ['a receive time that became a real', 'UPDATE journal_groups SET received_min_ms = received_min_ms + 0.5 WHERE first_position = 2'],
    ['a flipped bit in a header field', 'UPDATE journal_groups SET received_max_ms = received_max_ms + 1 WHERE first_position = 2'],
    ['a flipped bit in the events', (db: Database.Database) => {
      const blob = db.prepare('SELECT events FROM journal_groups WHERE first_position = 2').pluck().get() as Buffer;
      blob[blob.length - 3] ^= 0x04;
      db.prepare('UPDATE journal_groups SET events = ? WHERE first_position = 2').run(blob);
    }],
  ])('refuses a group row whose cell changed: %s', async (_what, damage: string | ((db: Database.Database) => void)) => {
    const j = Journal.open(dir);
    await appendGroups(j, [1, 3, 1]);
    j.close();
    poke((db) => (typeof damage === 'string' ? db.exec(damage) : damage(db)));
    const again = Journal.open(dir);
    try {
      expect(() => [...again.readAfter(0n)]).toThrowError(/corruption in .*journal\.db/);
      expect([...again.readAfter(0n, 1)].map((e) => e.payload.toString())).toEqual(['{"i":1}']);
      expect([...again.readAfter(4n)].map((e) => e.payload.toString())).toEqual(['{"i":5}']);
    } finally {
      again.close();
    }
  });

  it.each([
    ['a payload length that overruns the group', (r: GroupRow) => (r.events = r.events.subarray(0, r.events.length - 1)), /overruns the group/],
    ['a count that disagrees with the frames', (r: GroupRow) => (r.event_count = 2n), /bytes after its 2 events/],
    ['a count larger than the frames', (r: GroupRow) => (r.event_count = 4n), /overruns the group/],
    ['bytes after the last frame', (r: GroupRow) => (r.events = Buffer.concat([r.events, Buffer.from([0])])), /1 byte after its 3 events/],
    ['an unknown framing version', (r: GroupRow) => (r.events = Buffer.concat([Buffer.from([9]), r.events.subarray(1)])), /unknown framing version/],
    ['no topics', (r: GroupRow) => (r.events = Buffer.concat([r.events.subarray(0, 1), Buffer.from([0]), r.events.subarray(2)])), /0 topics for 3 events/],
    ['a frame naming a topic the group does not have', (r: GroupRow) => {
      const strings = ['tilstand/s1/events/inventory/stock', 'inventory', 'stock'];
      const firstTag = 2 + strings.reduce((n, x) => n + 1 + Buffer.byteLength(x), 0);
      r.events = Buffer.from(r.events);
      r.events[firstTag] = r.events[firstTag]! + 4; // triple 1 of 1
    }, /a frame naming topic 1 of 1/],
  ])('refuses a group whose framing is wrong even with a matching CRC: %s', async (_what, change, message) => {
    const j = Journal.open(dir);
    await appendGroups(j, [1, 3, 1]);
    j.close();
    rewriteGroup(2n, change);
    const again = Journal.open(dir);
    try {
      expect(() => [...again.readAfter(0n)]).toThrowError(message);
      expect(() => [...again.readAfter(0n)]).toThrowError(/corruption in .*journal\.db: the group at position 2/);
      expect([...again.readAfter(0n, 1)].map((e) => e.payload.toString())).toEqual(['{"i":1}']);
    } finally {
      again.close();
    }
  });

  it('refuses a group missing between two others (a gap)', async () => {
    const j = Journal.open(dir);
    await appendGroups(j, [1, 3, 1, 1]);
    j.close();
    poke((db) => db.exec('DELETE FROM journal_groups WHERE first_position = 2'));
    const again = Journal.open(dir);
    try {
      expect(() => [...again.readAfter(0n)]).toThrowError(/corruption in .*journal\.db: a group at position 5 where position 2 was expected/);
      expect([...again.readAfter(4n)].map((e) => e.position)).toEqual([5n, 6n]); // starting after the gap is fine
    } finally {
      again.close();
    }
  });

  it('refuses the first group left after a prune when it is missing: a reader from the checkpoint does not start at the group after it', async () => {
    const j = Journal.open(dir);
    await appendGroups(j, [1, 3, 1, 1]); // groups 1, 2..4, 5, 6
    expect((await j.prune({ maxAgeMs: 0, keepAfter: 1n })).deletedRows).toBe(1);
    j.close();
    poke((db) => db.exec('DELETE FROM journal_groups WHERE first_position = 2')); // the group holding checkpoint + 1
    const again = Journal.open(dir);
    try {
      expect(() => [...again.readAfter(1n)]).toThrowError(/corruption in .*journal\.db: .*position 2.*missing/);
      expect(() => [...again.readAfter(0n)]).toThrowError(/corruption in .*journal\.db: .*position 2.*missing/);
      expect([...again.readAfter(4n)].map((e) => e.position)).toEqual([5n, 6n]); // starting after the gap is fine
    } finally {
      again.close();
    }
    // What prune removed is no gap, read from anywhere before it; nor is a file whose oldest
    // groups were pruned before the journal kept what it pruned.
    const fresh = mkdtempSync(join(tmpdir(), 'tilstand-journal-'));
    try {
      const k = Journal.open(fresh);
      const pos = await appendGroups(k, [2, 2, 2]);
      await k.prune({ maxAgeMs: 0, keepAfter: pos[1]! });
      expect([...k.readAfter(0n)].map((e) => e.position)).toEqual(pos.slice(2));
      k.close();
      const db = new Database(join(fresh, 'journal.db'));
      db.exec("DELETE FROM meta WHERE key = 'pruned_through'");
      db.close();
      const k2 = Journal.open(fresh);
      expect([...k2.readAfter(0n)].map((e) => e.position)).toEqual(pos.slice(2));
      k2.close();
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('refuses a group that overlaps the previous one', async () => {
    const j = Journal.open(dir);
    await appendGroups(j, [1, 3, 1, 1]);
    j.close();
    poke((db) => db.exec('UPDATE journal_groups SET first_position = 4 WHERE first_position = 5'));
    rewriteGroup(4n, () => undefined); // a matching CRC for the moved row
    const again = Journal.open(dir);
    try {
      expect(() => [...again.readAfter(0n)]).toThrowError(/corruption in .*journal\.db: a group at position 4 where position 5 was expected/);
    } finally {
      again.close();
    }
  });

  it('refuses, at open, a damaged newest group (it carries the high-water mark of positions)', async () => {
    const j = Journal.open(dir);
    await appendGroups(j, [2, 2]);
    j.close();
    poke((db) => db.exec('UPDATE journal_groups SET event_count = 1 WHERE first_position = 3'));
    expect(() => Journal.open(dir)).toThrowError(/corruption in .*journal\.db: the group at position 3 fails its checksum/);
  });

  it.each([
    ['a renamed table', 'ALTER TABLE journal_groups RENAME TO journal_groupz', /unexpected tables/],
    ['a renamed column', 'ALTER TABLE journal_groups RENAME COLUMN first_position TO first_posithon', /unexpected journal_groups columns/],
    ['a renamed meta column', 'ALTER TABLE meta RENAME COLUMN value TO valve', /unexpected meta columns/],
    ['an extra table', 'CREATE TABLE journal (x)', /unexpected tables/],
    ['an index', 'CREATE INDEX j_crc ON journal_groups (crc)', /unexpected schema objects index j_crc/],
  ])('refuses a file whose schema was damaged (%s) instead of starting an empty journal', async (_what, sql, message) => {
    const j = Journal.open(dir);
    await j.append(ev(1));
    j.close();
    poke((db) => db.exec(sql));
    expect(() => Journal.open(dir)).toThrowError(/journal\.db is corrupt \(open\): unexpected/);
    expect(() => Journal.open(dir)).toThrowError(message);
  });

  it('refuses a format it does not know', async () => {
    Journal.open(dir).close();
    poke((db) => db.exec("UPDATE meta SET value = 'tilstand-journal-9' WHERE key = 'format'"));
    expect(() => Journal.open(dir)).toThrowError(/journal\.db is corrupt \(open\): unexpected journal format tilstand-journal-9/);
  });

  it('rejects bad options with expected/got', () => {
    expect(() => Journal.open(dir, { groupEventsMax: 0 })).toThrow(/groupEventsMax: expected a positive integer, got 0/);
    expect(() => Journal.open(dir, { readPageRows: 1.5 })).toThrow(/readPageRows: expected a positive integer, got 1.5/);
    expect(() => Journal.open(dir, { pruneBatchRows: -1 })).toThrow(/pruneBatchRows: expected a positive integer, got -1/);
  });

  it('is readable from a second connection once append resolved (WAL, committed)', async () => {
    const j = Journal.open(dir);
    const p = await j.append(ev(1));
    const other = new Database(join(dir, 'journal.db'), { readonly: true });
    expect(other.prepare('SELECT count(*) AS n FROM journal_groups WHERE first_position <= ? AND first_position + event_count > ?').get(p, p)).toEqual({ n: 1 });
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

  it('DiskBudget checks again after the clock stepped back, not only once it caught up', () => {
    let used = 0;
    let now = 10_000_000;
    const b = new DiskBudget({
      journal: { bytesUsed: () => used, path: join(dir, 'journal.db') },
      journalBytesMax: 1000,
      diskFreeBytesMin: 0,
      checkIntervalMs: 250,
      nowMs: () => now,
      freeBytes: () => 1e9,
    });
    expect(b.full()).toBe(false);
    now -= 3_600_000; // NTP corrects a clock an hour fast
    used = 2000;
    expect(b.full()).toBe(true); // was: "not full" until the clock reached the last check again
  });

  it('DiskBudget refuses a checkIntervalMs that is no number of ms, naming it (NaN never looked at the disk again)', () => {
    const options = { journal: { bytesUsed: () => 0, path: join(dir, 'journal.db') }, journalBytesMax: 1000, diskFreeBytesMin: 0, freeBytes: () => 1e9 };
    for (const bad of [NaN, -1, Infinity]) expect(() => new DiskBudget({ ...options, checkIntervalMs: bad }), String(bad)).toThrow(`DiskBudget checkIntervalMs: expected a number of ms >= 0, got ${bad}`);
    expect(new DiskBudget({ ...options, checkIntervalMs: 0 }).full()).toBe(false);
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

// ---- Files written by formats 1 and 2 (a row per event) ----------------------------------------

/** The format-2 row CRC, frozen here as format 2 wrote it. */
function legacyCrc(position: number, receivedAtMs: number, module: string, stream: string, seq: number | null, topic: string, payload: Buffer): number {
  return crc32(payload, crc32(`${position}\u0000${receivedAtMs}\u0000${module}\u0000${stream}\u0000${seq ?? ''}\u0000${topic}\u0000`));
}

interface LegacyRow {
  position: number;
  receivedAtMs: number;
  seq: number | null;
  payload: string;
}
function legacyFile(o: { format: 1 | 2; crcColumn: boolean; rows: LegacyRow[]; meta?: Record<string, string>; sequence?: number; checkpoint?: [string, number] }): void {
  const db = new Database(join(dir, 'journal.db'));
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE journal (position INTEGER PRIMARY KEY${o.format === 1 ? ' AUTOINCREMENT' : ''}, received_at_ms INTEGER NOT NULL, module TEXT NOT NULL,
      stream TEXT NOT NULL, seq INTEGER, topic TEXT NOT NULL, payload BLOB NOT NULL, size_bytes INTEGER NOT NULL${o.crcColumn ? ', crc INTEGER' : ''});
    CREATE TABLE checkpoint (name TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`);
  db.prepare("INSERT INTO meta VALUES ('format', ?)").run(`tilstand-journal-${o.format}`);
  for (const [k, v] of Object.entries(o.meta ?? {})) db.prepare('INSERT INTO meta VALUES (?, ?)').run(k, v);
  const topic = 'tilstand/s1/events/inventory/stock';
  for (const r of o.rows) {
    const payload = Buffer.from(r.payload);
    const cols = [r.position, r.receivedAtMs, 'inventory', 'stock', r.seq, topic, payload, payload.length + 82];
    if (o.crcColumn) db.prepare('INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(...cols, legacyCrc(r.position, r.receivedAtMs, 'inventory', 'stock', r.seq, topic, payload));
    else db.prepare('INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(...cols);
  }
  if (o.sequence !== undefined) db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'journal'").run(BigInt(o.sequence));
  if (o.checkpoint) db.prepare('INSERT INTO checkpoint VALUES (?, ?)').run(...o.checkpoint);
  db.close();
}
const rowsOf = (positions: number[]): LegacyRow[] => positions.map((p) => ({ position: p, receivedAtMs: 5000 + p, seq: p % 4 === 0 ? null : p * 10, payload: `{"p":${p}}` }));

describe('Journal files of formats 1 and 2 (a row per event)', () => {
  it('migrates format-2 rows into groups at open, keeping positions, fields, checkpoints and the high-water mark', async () => {
    legacyFile({ format: 2, crcColumn: true, rows: rowsOf(Array.from({ length: 25 }, (_, i) => i + 1)), meta: { crc_from: '0', last_position: '30' }, checkpoint: ['ingest', 10] });
    const j = Journal.open(dir, { groupEventsMax: 10 });
    const got = [...j.readAfter(0n)];
    expect(got.map((e) => e.position)).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i + 1)));
    for (const e of got) {
      const p = Number(e.position);
      expect(e).toMatchObject({ receivedAtMs: 5000 + p, module: 'inventory', stream: 'stock', topic: 'tilstand/s1/events/inventory/stock', seq: p % 4 === 0 ? null : BigInt(p * 10) });
      expect(e.payload.toString()).toBe(`{"p":${p}}`);
    }
    expect(j.getCheckpoint('ingest')).toBe(10n);
    expect(j.lastPosition()).toBe(30n); // the newest rows had been pruned: their positions stay used
    expect(await j.append(ev(1))).toBe(31n);
    j.close();
    expect(groupRows().map((r) => [r.first_position, r.event_count])).toEqual([[1n, 10n], [11n, 10n], [21n, 5n], [31n, 1n]]);
    poke((db) => {
      expect(db.prepare("SELECT group_concat(name) FROM (SELECT name FROM sqlite_master ORDER BY name)").pluck().get()).toBe('checkpoint,journal_groups,meta');
      expect(db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get()).toBe('tilstand-journal-3');
    });
  });

  it('migrates a format-1 file (AUTOINCREMENT, rows written before the CRC column existed)', async () => {
    legacyFile({ format: 1, crcColumn: false, rows: rowsOf([1, 2, 3]), sequence: 5 });
    const j = Journal.open(dir);
    expect([...j.readAfter(0n)].map((e) => e.position)).toEqual([1n, 2n, 3n]);
    expect(await j.append(ev(9))).toBe(6n); // sqlite_sequence said 5
    j.close();
    const again = Journal.open(dir);
    expect([...again.readAfter(0n)].map((e) => e.position)).toEqual([1n, 2n, 3n, 6n]);
    expect(again.lastPosition()).toBe(6n);
    again.close();
  });

  it('migrates rows that predate crc_from without a CRC and checks every row after', async () => {
    const rows = rowsOf([1, 2, 3]);
    legacyFile({ format: 2, crcColumn: true, rows, meta: { crc_from: '2' } });
    poke((db) => db.exec('UPDATE journal SET crc = NULL WHERE position = 1'));
    const j = Journal.open(dir);
    expect([...j.readAfter(0n)].map((e) => e.position)).toEqual([1n, 2n, 3n]);
    j.close();

    rmSync(join(dir, 'journal.db'));
    legacyFile({ format: 2, crcColumn: true, rows, meta: { crc_from: '0' } });
    poke((db) => db.exec('UPDATE journal SET crc = NULL WHERE position = 2'));
    expect(() => Journal.open(dir)).toThrowError(/journal\.db is corrupt \(open\): a format-1\/2 row after position 1 has no checksum \(position 2\)/);
  });

  it.each([
    ['a flipped bit in a payload', "UPDATE journal SET payload = CAST('{\"p\":7}' AS BLOB) WHERE position = 5", /row at position 5 fails its checksum/],
    ['a payload that became text', "UPDATE journal SET payload = 'x' WHERE position = 5", /damaged payload \(position 5\)/],
    ['a CRC that became a real', 'UPDATE journal SET crc = crc + 0.5 WHERE position = 5', /damaged checksum \(position 5\)/],
  ])('refuses a format-2 file with a damaged row (%s), leaving it as it was', async (_what, sql, message) => {
    legacyFile({ format: 2, crcColumn: true, rows: rowsOf([1, 2, 3, 4, 5, 6]), meta: { crc_from: '0' } });
    poke((db) => db.exec(sql));
    let err: unknown;
    try {
      Journal.open(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JournalError);
    expect((err as JournalError).kind).toBe('Corruption');
    expect((err as Error).message).toMatch(/journal\.db is corrupt \(open\)/);
    expect((err as Error).message).toMatch(message);
    poke((db) => {
      expect(db.prepare('SELECT count(*) FROM journal').pluck().get()).toBe(6n);
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'journal_groups'").pluck().get()).toBe(0n);
      expect(db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get()).toBe('tilstand-journal-2');
    });
  });

  it('migrates rows with a gap in their positions and reads across it; new groups are contiguous again', async () => {
    legacyFile({ format: 2, crcColumn: true, rows: rowsOf([3, 4, 8, 9]), meta: { crc_from: '0', last_position: '9' } });
    const j = Journal.open(dir);
    expect([...j.readAfter(0n)].map((e) => e.position)).toEqual([3n, 4n, 8n, 9n]);
    expect(await j.append(ev(1))).toBe(10n);
    expect([...j.readAfter(3n)].map((e) => e.position)).toEqual([4n, 8n, 9n, 10n]);
    j.close();
  });

  it('reports a group lost right after the migrated rows: only a gap inside them is history', async () => {
    legacyFile({ format: 2, crcColumn: true, rows: rowsOf([3, 4, 8, 9]), meta: { crc_from: '0', last_position: '9' } });
    const j = Journal.open(dir);
    expect(await Promise.all([j.append(ev(1)), j.append(ev(2))])).toEqual([10n, 11n]);
    await new Promise((r) => setImmediate(r));
    expect(await Promise.all([j.append(ev(3)), j.append(ev(4))])).toEqual([12n, 13n]);
    j.close();
    const db = new Database(join(dir, 'journal.db'));
    db.prepare('DELETE FROM journal_groups WHERE first_position = 10').run(); // an acknowledged group lost
    db.close();
    const j2 = Journal.open(dir);
    try {
      expect(() => [...j2.readAfter(0n)]).toThrow(/a group at position 12 where position 10 was expected/);
    } finally {
      j2.close();
    }
  });

  it('refuses a format-1/2 file whose journal table lost a column', () => {
    legacyFile({ format: 2, crcColumn: true, rows: rowsOf([1]) });
    poke((db) => db.exec('ALTER TABLE journal RENAME COLUMN topic TO topix'));
    expect(() => Journal.open(dir)).toThrowError(/journal\.db is corrupt \(open\): unexpected journal columns/);
  });
});
