// `tilstand restore --fall-back-to-tag` when decision_log's latest snapshot at HQ is damaged and
// approval_inbox's is sound: the log comes back at its tag, the inbox at its latest, whose commits
// claim log ids the restored log never got. Before, the Inbox's open read that as a crash between
// its two commits (log-recovery.ts): it rebuilt the last inbox commit's entries at the restored
// log's next id — an id approval_inbox's rows name as another proposal's first entry, so that
// proposal's trail began with someone else's approval — and warned of a crash that never was.
// The restore now leaves the lost ids unused (decision_log's next id moved to the inbox's claim),
// and says what of the inbox tables is lost: nothing resends proposals and decisions.
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decisionLogNextId, readDecisionLog } from '../../inbox/index.ts';
import { Inbox } from '../../inbox/inbox.ts';
import { DB, inboxTest, proposalInput } from '../../inbox/test-support.ts';
import { Catalog } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { referencedFiles } from '../plan.ts';
import { readRestoreNote } from '../restore.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runRestore } from './sync.ts';

const t = inboxTest('tilstand-rfi-');
const PIN = { user: 'lena', pin: '1111' };

describe('restore --fall-back-to-tag of decision_log beside a sound approval_inbox', () => {
  it('the lost log ids stay unused: no entry takes an id another entry had, no crash is claimed', { timeout: 120_000 }, async () => {
    const hqDir = mkdtempSync(join(tmpdir(), 'tilstand-rfi-hq-'));
    const data = mkdtempSync(join(tmpdir(), 'tilstand-rfi-data-'));
    try {
      let i = t.open();
      const a = i.submit({ runId: 'r1', proposals: [proposalInput('J-1', 'r1'), proposalInput('J-2', 'r1')], withdrawals: [] }).created;
      await i.decide(a[0]!.id, 'approve', PIN);
      i.close();
      const logT = t.catalog.getTable({ database: DB, table: 'decision_log' });
      logT.createTag('hourly-2026113008');
      const tagged = logT.tags.get('hourly-2026113008').snapshot;
      t.now += 60_000;
      i = t.open();
      const b = i.submit({ runId: 'r2', proposals: [proposalInput('J-3', 'r2'), proposalInput('J-4', 'r2')], withdrawals: [] }).created;
      await i.decide(b[0]!.id, 'approve', PIN);
      const original = new Map(readDecisionLog(logT).map((e) => [e.id, `${e.event} ${e.proposalId}`]));
      const nextBefore = decisionLogNextId(logT)!;
      i.close();
      await shipToDirectory(t.dir, 's1', hqDir);
      const latest = logT.latestSnapshot()!;
      const inTag = new Set(referencedFiles(logT, tagged).map((f) => f.rel));
      const lost = referencedFiles(logT, latest).find((f) => f.rel.startsWith('bucket-') && !inTag.has(f.rel))!;
      unlinkSync(join(hqDir, `${DB}.db`, 'decision_log', ...lost.rel.split('/')));

      const r = await runCli(runRestore, ['--data', data, '--hq', hqDir, '--site', 's1', '--fall-back-to-tag']);
      expect(r.code, r.err).toBe(4);
      const line = r.out.split('\n').find((l) => l.startsWith('decision_log: '))!;
      expect(line).toContain('restored from tag hourly-2026113008');
      // No module resends a log entry (or a person's decision).
      expect(line).not.toMatch(/modules still hold/);
      expect(line).toMatch(/not resent/);
      expect(readRestoreNote(data)!.restoredFromTag![0]!.table).toBe('decision_log');

      const warnings: string[] = [];
      const j = Inbox.open({ catalog: new Catalog(join(data, 'warehouse'), { clock: () => t.now }), database: DB, users: t.users, recheck: () => ({ holds: true, snapshots: {} }), clock: () => t.now, onWarning: (m) => warnings.push(m) });
      try {
        expect(warnings.filter((w) => /process stopped/.test(w))).toEqual([]);
        for (const e of readDecisionLog(j.logTable)) expect(`${e.id} ${e.event} ${e.proposalId}`).toBe(`${e.id} ${original.get(e.id)}`);
        expect(decisionLogNextId(j.logTable)).toBeGreaterThanOrEqual(nextBefore);
        await j.decide(b[1]!.id, 'reject', PIN);
        const newest = readDecisionLog(j.logTable, b[1]!.id).at(-1)!;
        expect(newest.event).toBe('rejected');
        expect(newest.id).toBeGreaterThanOrEqual(nextBefore);
      } finally {
        j.close();
      }
    } finally {
      rmSync(hqDir, { recursive: true, force: true });
      rmSync(data, { recursive: true, force: true });
    }
  });
});
