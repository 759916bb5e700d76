// A wrong PIN at a decision says how many tries are left before the lockout, in the singular for
// one: it said "(1 attempts left)".
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { Inbox } from './inbox.ts';
import { situationKey } from './proposal.ts';
import { UserStore } from './users.ts';

let dir: string;
let db: Database.Database;
let inbox: Inbox;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-attempts-left-'));
  db = new Database(join(dir, 'site.db'));
  const users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, failuresMax: 3, lockoutMs: 60_000 });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
  inbox = Inbox.open({ catalog: new Catalog(join(dir, 'warehouse')), database: 'site_s1', users, recheck: () => ({ holds: true, snapshots: { work_queue: 7 } }), onWarning: () => undefined });
});
afterEach(() => {
  inbox.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

it('counts the attempts left, "1 attempt left" for the last', async () => {
  const [p] = inbox.submit({
    runId: 'r1',
    proposals: [
      {
        situationKey: situationKey('assign-job', 'assign_job', { job_id: 'J-1' }),
        ruleId: 'assign-job',
        ruleVersion: '1',
        action: 'assign_job',
        module: 'operations',
        params: { job_id: 'J-1', resource_id: 'M-1' },
        risk: 'low',
        riskReason: 'reversible',
        explanation: 'start J-1 on M-1',
        evidence: [],
        runId: 'r1',
      },
    ],
    withdrawals: [],
  }).created;
  const said: string[] = [];
  for (let k = 0; k < 2; k++) said.push(((await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '9999' }).catch((e: unknown) => e)) as Error).message);
  expect(said[0]).toMatch(/ \(2 attempts left\)$/);
  expect(said[1]).toMatch(/ \(1 attempt left\)$/);
});
