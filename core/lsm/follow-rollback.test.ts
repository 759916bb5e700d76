// A follower open across a destructive rollback (`tilstand table follow` in one terminal,
// `tilstand table rollback` in another). The rollback moves the consumer back to target+1, and the
// ids after the target are committed again with other content. Before, the follower kept its own
// position: its next ack wrote it over the rollback's, and it skipped the new snapshots up to its
// old position — those rows never reached it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { ChangeFollower } from './incremental.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import type { TableWriter } from './table-writer.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A table with snapshots 1..4 of keys 1..4. */
function tableOfFour(): { dir: string; t: Table; w: TableWriter } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-follow-rollback-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } }, 0));
  const w = t.newWriter();
  for (let k = 1; k <= 4; k++) {
    w.writeRecord({ k });
    w.commit();
  }
  return { dir, t, w };
}

/** Every key the follower delivers until it is caught up (at most 100 batches), acking each batch. */
function drain(f: ChangeFollower): unknown[] {
  const keys: unknown[] = [];
  for (let i = 0; i < 100; i++) {
    const batch = f.next();
    if (batch === undefined) return keys;
    keys.push(...batch.map((c) => c.row[0]));
  }
  throw new Error('the follower never caught up');
}

const stored = (dir: string): number => (JSON.parse(readFileSync(join(dir, 'consumer', 'consumer-c'), 'utf8')) as { nextSnapshot: number }).nextSnapshot;

it('a follower whose acknowledged position a rollback moved back reads the new snapshots from there', () => {
  const { dir, t, w } = tableOfFour();
  const f = t.follow({ consumer: 'c', from: 1 });
  expect(drain(f)).toEqual([1, 2, 3, 4]);
  expect(stored(dir)).toBe(5);
  w.rollbackTo(2);
  expect(stored(dir)).toBe(3);
  for (let k = 10; k <= 13; k++) {
    w.writeRecord({ k });
    w.commit();
  }
  w.close();
  // Snapshots 3..6 are new: all four are delivered, none skipped.
  expect(drain(f)).toEqual([10, 11, 12, 13]);
  expect(stored(dir)).toBe(t.latestSnapshot()!.id + 1);
});

it('a batch returned, not acknowledged, and rolled away is delivered again from the acknowledged position', () => {
  const { dir, t, w } = tableOfFour();
  const f = t.follow({ consumer: 'c', from: 3 });
  // Snapshot 3's batch is out, not acknowledged: the consumer still says 3, which the rollback
  // to 2 leaves as it is.
  expect(f.next()!.map((c) => c.row[0])).toEqual([3]);
  w.rollbackTo(2);
  expect(stored(dir)).toBe(3);
  for (let k = 10; k <= 12; k++) {
    w.writeRecord({ k });
    w.commit();
  }
  w.close();
  expect(drain(f)).toEqual([10, 11, 12]);
  expect(stored(dir)).toBe(t.latestSnapshot()!.id + 1);
});

it('a rollback and new commits in another process: the follower reads the new snapshots, not what it had cached', () => {
  const { dir, t, w } = tableOfFour();
  w.close();
  const f = t.follow({ consumer: 'c', from: 1 });
  expect(drain(f)).toEqual([1, 2, 3, 4]);
  const script = `
    import { Table } from ${JSON.stringify(resolve(import.meta.dirname, 'table.ts'))};
    const w = Table.open(${JSON.stringify(dir)}).newWriter();
    w.rollbackTo(2);
    for (let k = 10; k <= 13; k++) { w.writeRecord({ k }); w.commit(); }
    w.close();
    console.log('done');
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  expect(child.stdout.trim(), child.stderr).toBe('done');
  expect(drain(f)).toEqual([10, 11, 12, 13]);
  expect(stored(dir)).toBe(Table.open(dir).latestSnapshot()!.id + 1);
}, 60_000);
