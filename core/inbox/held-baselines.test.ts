// The inbox keeps, for the agent, the baselines it holds its rules on (core/agents DESIGN.md, "A
// run", step 5): in approval_inbox's snapshot properties, so that a restart reads them back.
// core/agents quiet-dip.test.ts tests what the agent does with them; this, what the inbox keeps.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { Catalog, TableWriter } from '../lsm/index.ts';
import { HELD_BASELINES_PROPERTY, Inbox } from './inbox.ts';
import { situationKey } from './proposal.ts';
import { UserStore } from './users.ts';

let dir: string;
let db: Database.Database;
let users: UserStore;
let catalog: Catalog;
const open: Inbox[] = [];
const inboxAt = () => {
  const i = Inbox.open({ catalog, database: 'site_s1', users, recheck: () => ({ holds: true, snapshots: {} }), onWarning: () => undefined });
  open.push(i);
  return i;
};
const committed = () => catalog.getTable({ database: 'site_s1', table: 'approval_inbox' }).committedProperties()[HELD_BASELINES_PROPERTY];
const held = { 'stock-reorder': { stock: 'agent-20261130-080000-000', work_queue: 'agent-20261130-080000-000' }, 'own-rule': null };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-held-baselines-'));
  db = new Database(join(dir, 'site.db'));
  users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 } });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
  catalog = new Catalog(join(dir, 'warehouse'));
});
afterEach(() => {
  for (const i of open.splice(0)) i.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

it('are committed when they change, carried by later commits, and read back by the next open', async () => {
  const inbox = inboxAt();
  expect(inbox.heldBaselines()).toEqual({});
  inbox.holdBaselines(held);
  expect(JSON.parse(committed()!)).toEqual(held);
  // A decision commits after it: the record stays.
  const [p] = inbox.submit({
    runId: 'r1',
    proposals: [{ situationKey: situationKey('idle-resource', 'notice', { resource_id: 'M-1' }), ruleId: 'idle-resource', ruleVersion: '1', action: 'notice', module: null, params: { resource_id: 'M-1' }, risk: 'low', riskReason: 'r', explanation: 'e', evidence: [], runId: 'r1' }],
    withdrawals: [],
  }).created;
  await inbox.decide(p!.id, 'reject', { user: 'lena', pin: '1111' });
  inbox.close();
  expect(inboxAt().heldBaselines()).toEqual(held);
});

it('a commit that failed is made by the next call with the same holds', () => {
  const inbox = inboxAt();
  const commit = vi.spyOn(TableWriter.prototype, 'commit').mockImplementationOnce(() => {
    throw new Error('disk full');
  });
  expect(() => inbox.holdBaselines(held)).toThrow('disk full');
  commit.mockRestore();
  expect(committed()).toBeUndefined();
  inbox.holdBaselines(held);
  expect(JSON.parse(committed()!)).toEqual(held);
});
