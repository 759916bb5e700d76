// Test support for core/inbox tests: per test, a temporary data directory with site.db (a
// UserStore with fast scrypt and one shift lead, `lena`, PIN 1111) and a warehouse, and Inboxes
// opened on them on a clock the test moves; all closed and removed after the test.

import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { Inbox, type InboxOptions } from './inbox.ts';
import { situationKey, type ProposalInput } from './proposal.ts';
import { UserStore, type UserStoreOptions } from './users.ts';

export const DB = 'site_s1';
export const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
/** The hash's cost is not under test in these files. */
export const FAST_SCRYPT = { N: 1 << 10, r: 8, p: 1 };

export interface InboxTest {
  readonly T0: number;
  /** The clock of the catalog, the users and every Inbox opened (epoch ms); T0 at each test's start. */
  now: number;
  readonly dir: string;
  readonly db: Database.Database;
  readonly users: UserStore;
  readonly catalog: Catalog;
  /** An Inbox on this test's warehouse and users (its recheck holds; closed after the test). */
  open(o?: Partial<InboxOptions>): Inbox;
}

/**
 * Registers the set-up and clean-up of each test of the file (beforeEach, afterEach) and returns
 * the current test's things. `users`: options of the UserStore besides its clock and scrypt.
 */
export function inboxTest(prefix: string, o: { users?: UserStoreOptions } = {}): InboxTest {
  let state: Omit<InboxTest, 'T0' | 'now' | 'open'> | undefined;
  const opened: Inbox[] = [];
  const t: InboxTest = {
    T0,
    now: T0,
    get dir() {
      return current().dir;
    },
    get db() {
      return current().db;
    },
    get users() {
      return current().users;
    },
    get catalog() {
      return current().catalog;
    },
    open(over = {}) {
      const inbox = Inbox.open({ catalog: t.catalog, database: DB, users: t.users, recheck: () => ({ holds: true, snapshots: {} }), clock: () => t.now, onWarning: () => undefined, ...over });
      opened.push(inbox);
      return inbox;
    },
  };
  const current = () => {
    if (!state) throw new Error('inboxTest: used outside a test');
    return state;
  };
  beforeEach(async () => {
    t.now = T0;
    const dir = mkdtempSync(join(tmpdir(), prefix));
    const db = new Database(join(dir, 'site.db'));
    const users = new UserStore(db, { scrypt: FAST_SCRYPT, nowMs: () => t.now, ...o.users });
    await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
    state = { dir, db, users, catalog: new Catalog(join(dir, 'warehouse'), { clock: () => t.now }) };
  });
  afterEach(() => {
    const { dir, db } = current();
    state = undefined;
    try {
      // A test that stopped an inbox as a crash does has closed it already (close then does nothing).
      for (const inbox of opened.splice(0)) inbox.close();
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return t;
}

/** An assign-job proposal for `job` on M-1, by run `runId`; `over` replaces fields. */
export function proposalInput(job = 'J-1', runId = 'r1', over: Partial<ProposalInput> = {}): ProposalInput {
  return {
    situationKey: situationKey('assign-job', 'assign_job', { job_id: job }),
    ruleId: 'assign-job',
    ruleVersion: '1',
    action: 'assign_job',
    module: 'operations',
    params: { job_id: job, resource_id: 'M-1' },
    risk: 'low',
    riskReason: 'reversible',
    explanation: `start ${job} on M-1`,
    evidence: [],
    runId,
    ...over,
  };
}
