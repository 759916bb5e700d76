// A module that refuses a command before the broker's PUBACK reaches the write-back (a module on
// the same PC answers within the publish): the command was sent — the module read it — so its
// failure counts toward FAILURES_TO_QUIET as any refusal does, and the trail says it was sent.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { Inbox } from './inbox.ts';
import { situationKey, type ProposalInput } from './proposal.ts';
import { UserStore } from './users.ts';
import { WriteBack } from './write-back.ts';

const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
let dir: string;
let db: Database.Database;
let inbox: Inbox;
const now = T0;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-writeback-refused-'));
  db = new Database(join(dir, 'site.db'));
  const users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, nowMs: () => now });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
  inbox = Inbox.open({ catalog: new Catalog(join(dir, 'warehouse'), { clock: () => now }), database: 'site_s1', users, recheck: () => ({ holds: true, snapshots: {} }), clock: () => now, onWarning: () => undefined });
});

afterEach(() => {
  inbox.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const proposal = (job: string, runId: string): ProposalInput => ({
  situationKey: situationKey('assign-job', 'assign_job', { job_id: job }),
  ruleId: 'assign-job',
  ruleVersion: '1',
  action: 'assign_job',
  module: 'operations',
  params: { job_id: job, resource_id: 'M-1' },
  risk: 'low',
  riskReason: 'reversible',
  explanation: 'start it',
  evidence: [],
  runId,
});

it('a refusal handled before the publish returns is a failure of a sent command: it is logged as sent, and two quiet the situation', async () => {
  let wb!: WriteBack;
  wb = new WriteBack({
    inbox,
    publish: async (_topic, payload) => {
      const c = JSON.parse(payload) as { command_id: string };
      wb.handleAck('tilstand/s1/acks/operations', Buffer.from(JSON.stringify({ command_id: c.command_id, module: 'operations', ok: false, error: 'resource M-1 is down' })));
    },
    onAck: () => undefined,
    effectSeen: () => false,
    clock: () => now,
    onWarning: () => undefined,
  });
  const ids: string[] = [];
  for (const run of ['r1', 'r2']) {
    const [p] = inbox.submit({ runId: run, proposals: [proposal('J-1', run)], withdrawals: [] }).created;
    expect(p, `proposed in ${run}`).toBeDefined();
    expect((await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
    expect(inbox.get(p!.id)!.command).toMatchObject({ state: 'failed', sentAtMs: T0, detail: 'resource M-1 is down' });
    ids.push(p!.id);
  }
  expect(inbox.history(ids[0]!).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_failed']);
  expect(inbox.failedBefore(proposal('J-1', 'r3').situationKey).map((f) => f.sent)).toEqual([true, true]);
  // The module refused it twice: not asked again every minute.
  expect(inbox.submit({ runId: 'r3', proposals: [proposal('J-1', 'r3')], withdrawals: [] }).suppressed).toEqual([proposal('J-1', 'r3').situationKey]);
  wb.stop();
});
