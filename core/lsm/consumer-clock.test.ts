// consumer.expiration-time is measured on the table's clock (consumer.ts, header): a table with an
// injected clock (a test, a replay's simulated clock) expires a consumer when that clock says it
// went without an update for that long — not when the file's modification time (wall clock) is
// that far behind the injected clock. A consumer file this process did not write (Java's: only
// nextSnapshot, the modification time is all there is) is aged by its modification time.

import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import type { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const HOUR = 3_600_000;

function setup(clock: () => number): Table {
  const dir = mkdtempSync(join(tmpdir(), 'consumer-clock-'));
  dirs.push(dir);
  const catalog = new Catalog(dir, { clock });
  catalog.createDatabase('db');
  return catalog.createTable(
    { database: 'db', table: 't' },
    {
      fields: [{ name: 'k', type: 'STRING' }, { name: 'v', type: 'INT' }],
      primaryKeys: ['k'],
      options: { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.time-retained': '1 ms', 'consumer.expiration-time': '1 h', 'write-only': 'true' },
    },
  );
}

/** Commits `n` snapshots of one key. */
function commits(table: Table, n: number, from = 1): void {
  const w = table.newWriter();
  for (let i = 0; i < n; i++) {
    w.writeRecord({ k: 'a', v: from + i });
    w.commit();
  }
  w.close();
}

function expire(table: Table): number[] {
  const w = table.newWriter();
  try {
    return w.expire().expiredSnapshots;
  } finally {
    w.close();
  }
}

const consumerFile = (t: Table, id: string) => join(t.paths.root, 'consumer', `consumer-${id}`);

describe('consumer.expiration-time on an injected clock', () => {
  it('a clock ahead of the wall: a consumer updated a minute ago (table time) keeps protecting its snapshots', () => {
    let now = Date.now() + 30 * 24 * HOUR; // e.g. a replay of a period the PC's clock has not reached
    const t = setup(() => now);
    commits(t, 1);
    const f = t.follow({ consumer: 'slow', from: 'earliest' });
    f.next(); // snapshot 1
    f.ack(); // position 2, stored now (table time)
    commits(t, 3, 2);
    now += 60_000;
    // Was: the file's modification time (wall clock) is 30 days behind the table's clock: removed at
    // once, snapshots 2 and 3 expired, and the follower's next read failed ("has expired").
    expect(expire(t)).toEqual([1]);
    expect(existsSync(consumerFile(t, 'slow'))).toBe(true);
    expect(f.next()).toBeDefined();
  });

  it('a clock behind the wall: a consumer not updated for two hours of table time expires', () => {
    let now = Date.parse('2026-03-01T08:00:00Z'); // a replay of a past period
    const t = setup(() => now);
    commits(t, 1);
    const f = t.follow({ consumer: 'gone', from: 'earliest' });
    f.next();
    f.ack(); // position 2
    commits(t, 3, 2);
    now += 10 * 60_000;
    expect(expire(t)).toEqual([1]); // protected from 2 on
    expect(existsSync(consumerFile(t, 'gone'))).toBe(true);
    now += 2 * HOUR;
    // Was: the modification time (wall clock, months after the table's clock) never fell behind it.
    expect(expire(t)).toEqual([2, 3]);
    expect(existsSync(consumerFile(t, 'gone'))).toBe(false);
  });

  it('a consumer file another process wrote (Java: nextSnapshot only) is aged by its modification time', () => {
    let now = Date.parse('2026-03-01T08:00:00Z');
    const t = setup(() => now);
    commits(t, 4);
    now += 1000;
    mkdirSync(join(t.paths.root, 'consumer'), { recursive: true });
    for (const [id, ageMs] of [['java-old', 2 * HOUR], ['java-new', 10 * 60_000]] as const) {
      const file = consumerFile(t, id);
      writeFileSync(file, '{\n  "nextSnapshot" : 2\n}');
      const at = new Date(Date.now() - ageMs);
      utimesSync(file, at, at);
    }
    // Two hours old by the wall clock: expired (as Java's expiration would); ten minutes: kept.
    expect(expire(t)).toEqual([1]);
    expect(existsSync(consumerFile(t, 'java-old'))).toBe(false);
    expect(existsSync(consumerFile(t, 'java-new'))).toBe(true);
    // From when it was first seen it ages on the table's clock: 45 more minutes of table time.
    now += 45 * 60_000;
    expect(expire(t)).toEqual([]);
    expect(existsSync(consumerFile(t, 'java-new'))).toBe(true);
    now += 10 * 60_000;
    expect(expire(t)).toEqual([2, 3]);
    expect(existsSync(consumerFile(t, 'java-new'))).toBe(false);
  });

  it('a consumer rewritten after it was first seen counts from the rewrite', () => {
    let now = Date.parse('2026-03-01T08:00:00Z');
    const t = setup(() => now);
    commits(t, 1);
    const f = t.follow({ consumer: 'c', from: 'earliest' });
    f.next();
    f.ack(); // position 2
    commits(t, 3, 2);
    now += 50 * 60_000;
    expect(expire(t)).toEqual([1]);
    f.next();
    f.ack(); // position 3, written now
    now += 50 * 60_000; // 100 minutes after the first write, 50 after the second
    expect(expire(t)).toEqual([2]);
    expect(existsSync(consumerFile(t, 'c'))).toBe(true);
  });
});
