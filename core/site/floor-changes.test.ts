// The floor's config changes: kept in site.db, so that a read after a restart looks only at the
// decision log's entries since the last read, not at every decision ever made.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CONFIG_CHANGED_EVENT, DECISION_LOG_SPEC, DecisionLog } from '../inbox/index.ts';
import { UserStore } from '../inbox/users.ts';
import { Catalog, type Table } from '../lsm/index.ts';
import { reorderPolicyKey } from './config.ts';
import { FloorChanges } from './floor-changes.ts';

const DB = 'site_s1';
let dir: string;
let db: Database.Database;
let log: Table;
let writer: DecisionLog;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-floor-'));
  db = new Database(join(dir, 'site.db'));
  new UserStore(db); // site.db as the site opens it: site_meta is the UserStore's table
  const catalog = new Catalog(join(dir, 'warehouse'));
  catalog.createDatabase(DB);
  // Files rolled at 1 kb, so the log is many files with disjoint entry ids.
  log = catalog.createTable({ database: DB, table: 'decision_log' }, { ...DECISION_LOG_SPEC, options: { ...DECISION_LOG_SPEC.options, 'target-file-size': '1 kb', 'num-sorted-run.compaction-trigger': '3' } });
  writer = new DecisionLog(log);
});
afterEach(() => {
  writer.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `n` entries of the agent's (committed 25 at a time), then one config change of `key` by `user`; committed. */
function entries(n: number, key: string, user: string, after: number): number {
  for (let i = 0; i < n; i++) {
    writer.append({ atMs: i, proposalId: `P-r-${i}`, event: 'proposed', actor: 'agent-r', detail: { reason: 'x'.repeat(40) } });
    if (i % 25 === 24) writer.commit(); // a commit per agent run
  }
  const id = writer.append({ atMs: 1000 + after, proposalId: null, event: CONFIG_CHANGED_EVENT, actor: user, detail: { key, before: null, after: { reorderPoint: after, orderUpTo: after * 3 } } });
  writer.commit();
  return id;
}

describe('FloorChanges', () => {
  it('reads the changes once, keeps them in site.db, and after a restart reads only the newer entries of the log', () => {
    entries(300, 'agent.reorderByItem.A', 'lena', 5);
    entries(300, 'agent.reorderByItem.B', 'ada', 6);
    const third = entries(300, 'agent.reorderByItem.A', 'ada', 7);
    const first = new FloorChanges(db, log);
    const read = first.read();
    expect(read.list.map((c) => [c.key, c.user, c.after])).toEqual([
      ['agent.reorderByItem.A', 'ada', { reorderPoint: 7, orderUpTo: 21 }],
      ['agent.reorderByItem.B', 'ada', { reorderPoint: 6, orderUpTo: 18 }],
      ['agent.reorderByItem.A', 'lena', { reorderPoint: 5, orderUpTo: 15 }],
    ]);
    expect(read.byKey.get('agent.reorderByItem.A')!.id).toBe(third);
    expect(first.read()).toBe(read); // kept

    // A restart: what site.db holds is not read from the log again (changed here, it shows).
    db.prepare("UPDATE floor_changes SET user = 'from-site-db' WHERE entry_id = ?").run(third);
    const fourth = entries(300, 'agent.reorderByItem.C', 'lena', 8);
    const files = log.buckets(log.latestSnapshot()!).flatMap((b) => b.files);
    expect(files.length).toBeGreaterThan(10);
    const loads = vi.spyOn(log.constructor.prototype as { loadRun: (...a: unknown[]) => unknown }, 'loadRun');
    let again;
    try {
      again = new FloorChanges(db, log).read();
      const opened = new Set(loads.mock.calls.filter((c) => c[0] !== undefined).map((c) => (c[2] as { fileName: string }).fileName));
      expect(opened.size).toBeLessThan(files.length / 2);
    } finally {
      loads.mockRestore();
    }
    expect(again.list.map((c) => [c.id, c.user])).toEqual([
      [fourth, 'lena'],
      [third, 'from-site-db'],
      [third - 301, 'ada'],
      [third - 602, 'lena'],
    ]);
  });

  it('adds a change made here to what it read, and to site.db', () => {
    entries(10, 'agent.reorderByItem.A', 'lena', 5);
    const f = new FloorChanges(db, log);
    expect(f.read().list).toHaveLength(1);
    const id = writer.append({ atMs: 5000, proposalId: null, event: CONFIG_CHANGED_EVENT, actor: 'ada', detail: { key: 'agent.reorderByItem.B', before: null, after: null } });
    writer.commit();
    const change = { id, atMs: 5000, user: 'ada', key: 'agent.reorderByItem.B', before: null, after: null };
    f.add(change);
    expect(f.read().list[0]).toEqual(change);
    expect(f.read().byKey.get('agent.reorderByItem.B')).toEqual(change);
    expect(new FloorChanges(db, log).read().list.map((c) => c.id)).toEqual([id, id - 1]);
  });

  it('finds a change recorded before ids with a dot were quoted under the key the policy has now', () => {
    const id = entries(5, 'agent.reorderByItem.BOLT.M8.locations.DOCK.2', 'lena', 5);
    const read = new FloorChanges(db, log).read();
    expect(read.byKey.get(reorderPolicyKey('BOLT.M8', 'DOCK.2'))?.id).toBe(id);
    // As recorded, in the list.
    expect(read.list[0]!.key).toBe('agent.reorderByItem.BOLT.M8.locations.DOCK.2');
  });
});
