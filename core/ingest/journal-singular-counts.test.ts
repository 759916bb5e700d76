// A damaged journal group's counts in the singular for one, as `site <id> did not start: journal
// file … is corrupt` says them to the operator: "1 byte after its 1 event", not "1 bytes after its
// 1 events". The plural forms are in journal.test.ts ("bytes after its 2 events", "0 topics for 3 events").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { groupRowCrc, Journal } from './journal.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-journal-singular-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

type GroupRow = { first_position: bigint; event_count: bigint; received_min_ms: bigint; received_max_ms: bigint; size_bytes: bigint; crc: bigint; events: Buffer };

/** A journal of one group of one event, whose framing `change` damages with the CRC made to match. */
async function damagedSingleEvent(change: (events: Buffer) => Buffer): Promise<void> {
  const j = Journal.open(dir);
  await j.append({ topic: 'tilstand/s1/events/inventory/stock', payload: Buffer.from('{"i":1}'), receivedAtMs: 1000, module: 'inventory', stream: 'stock', seq: 1 });
  j.close();
  const db = new Database(join(dir, 'journal.db'));
  db.defaultSafeIntegers(true);
  try {
    const r = db.prepare('SELECT * FROM journal_groups WHERE first_position = 1').get() as GroupRow;
    expect(r.event_count).toBe(1n);
    const events = change(r.events);
    const crc = groupRowCrc(1, 1, Number(r.received_min_ms), Number(r.received_max_ms), Number(r.size_bytes), events);
    db.prepare('UPDATE journal_groups SET crc = ?, events = ? WHERE first_position = 1').run(BigInt(crc), events);
  } finally {
    db.close();
  }
}

/** What opening and reading the journal refuses it with (open checks the last group already). */
function readError(): string {
  let j: Journal | undefined;
  try {
    j = Journal.open(dir);
    [...j.readAfter(0n)];
    return 'read without an error';
  } catch (e) {
    return (e as Error).message;
  } finally {
    j?.close();
  }
}

describe("a damaged group's counts are said in the singular for one", () => {
  it('"1 byte after its 1 event"', async () => {
    await damagedSingleEvent((events) => Buffer.concat([events, Buffer.from([0])]));
    expect(readError()).toMatch(/the group at position 1 has 1 byte after its 1 event$/);
  });

  it('"2 bytes after its 1 event"', async () => {
    await damagedSingleEvent((events) => Buffer.concat([events, Buffer.from([0, 0])]));
    expect(readError()).toMatch(/the group at position 1 has 2 bytes after its 1 event$/);
  });

  it('"2 topics for 1 event"', async () => {
    // Byte 0 is the framing version, byte 1 the number of topics (1 here).
    await damagedSingleEvent((events) => Buffer.concat([events.subarray(0, 1), Buffer.from([2]), events.subarray(2)]));
    expect(readError()).toMatch(/the group at position 1 has 2 topics for 1 event$/);
  });
});
