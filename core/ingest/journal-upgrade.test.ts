// journal.db across versions of the install: an upgrade, a rollback to the older version, and the
// upgrade again. The older version here is commit 7a40e5d: it writes format 3 but knows nothing of
// meta.pruned_through, and each of its prune batches rewrites meta.last_position and deletes the
// oldest groups in one transaction (its pruneBatch). That is done below by hand on the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from './journal.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-journal-upgrade-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Appends `n` events, one group each; returns their positions. */
async function appendSingles(j: Journal, n: number, from = 1): Promise<bigint[]> {
  const out: bigint[] = [];
  for (let i = from; i < from + n; i++) {
    out.push(await j.append({ topic: 'tilstand/s1/events/inventory/stock', payload: Buffer.from(`{"i":${i}}`), receivedAtMs: 1000 + i, module: 'inventory', stream: 'stock', seq: i }));
  }
  return out;
}

/** What 7a40e5d's prune did to the file: last_position written, the groups through `through` deleted; pruned_through untouched. */
function olderVersionPrunes(through: number, last: number): void {
  const db = new Database(join(dir, 'journal.db'));
  try {
    db.transaction(() => {
      db.prepare("INSERT INTO meta (key, value) VALUES ('last_position', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(String(last));
      db.prepare('DELETE FROM journal_groups WHERE first_position <= ?').run(through);
    })();
  } finally {
    db.close();
  }
}

const positions = (j: Journal, after: bigint): bigint[] => [...j.readAfter(after)].map((e) => e.position);

describe('journal.db after a rollback to an older version and the upgrade again', () => {
  it('takes what the older version pruned for pruned, not for a lost group', async () => {
    const j = Journal.open(dir); // the events the older version journaled (the same format 3)
    await appendSingles(j, 10);
    j.close();
    Journal.open(dir).close(); // the upgrade: this version opens a file that holds groups
    olderVersionPrunes(6, 10); // the rollback: the older version prunes the oldest six

    const again = Journal.open(dir); // the upgrade again
    try {
      // A reader from before the oldest group (a replay export's cut) starts at the oldest one, as
      // after this version's own prune; it was "the group holding position 3 is missing".
      expect(positions(again, 2n)).toEqual([7n, 8n, 9n, 10n]);
      expect(positions(again, 6n)).toEqual([7n, 8n, 9n, 10n]);
      expect(await appendSingles(again, 1, 11)).toEqual([11n]);
    } finally {
      again.close();
    }
  });

  it('takes an older version\'s prune for pruned also after this version pruned before it', async () => {
    const j = Journal.open(dir);
    await appendSingles(j, 10);
    expect((await j.prune({ maxAgeMs: 0, keepAfter: 3n })).deletedRows).toBe(3);
    await appendSingles(j, 2, 11);
    j.close();
    olderVersionPrunes(8, 12);
    const again = Journal.open(dir);
    try {
      expect(positions(again, 3n)).toEqual([9n, 10n, 11n, 12n]);
    } finally {
      again.close();
    }
  });

  it('still refuses the first group left after its own prune when it is lost (the older version never ran)', async () => {
    const j = Journal.open(dir);
    await appendSingles(j, 10);
    expect((await j.prune({ maxAgeMs: 0, keepAfter: 3n })).deletedRows).toBe(3);
    j.close();
    const db = new Database(join(dir, 'journal.db'));
    db.prepare('DELETE FROM journal_groups WHERE first_position = 4').run(); // damage, not a prune: last_position untouched
    db.close();
    const again = Journal.open(dir);
    try {
      expect(() => positions(again, 3n)).toThrowError(/corruption in .*journal\.db: the group holding position 4 is missing/);
    } finally {
      again.close();
    }
  });

  it('still refuses a lost group after continueAfter raised last_position (this version wrote that, not an older one)', async () => {
    const j = Journal.open(dir);
    await appendSingles(j, 10);
    expect((await j.prune({ maxAgeMs: 0, keepAfter: 3n })).deletedRows).toBe(3);
    j.continueAfter(100n); // positions 11..100 skipped as history
    expect(await appendSingles(j, 3, 101)).toEqual([101n, 102n, 103n]);
    j.close();
    const db = new Database(join(dir, 'journal.db'));
    db.prepare('DELETE FROM journal_groups WHERE first_position <= 101').run(); // damage: 4..10 and 101 gone
    db.close();
    const again = Journal.open(dir);
    try {
      expect(() => positions(again, 3n)).toThrowError(/corruption in .*journal\.db: the group holding position 101 is missing/);
    } finally {
      again.close();
    }
  });
});
