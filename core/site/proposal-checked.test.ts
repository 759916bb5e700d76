// The Inbox's detail panel shows, for an approved or stale proposal, the state its approval was
// checked against, as `tilstand evidence` does: `getProposal` carries core/inbox evidenceReport's
// `checked` part — per table the snapshot the re-check read, its tag `checked-<id>`, and the cited
// rows read again there with whether they are the ones the agent read. Other proposals carry none.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { evidenceReport } from '../inbox/index.ts';
import { demoConfig } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { session } from './test-support/session.ts';

let dir: string;
let site: Site;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-proposal-checked-'));
  await initDataDir({ data: join(dir, 'data'), site: 'demo', config: (c) => demoConfig(c), admin: DEMO_ADMIN });
  site = await Site.start({ data: join(dir, 'data'), demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false, ui: false });
  await site.users.add({ name: 'Lena', role: 'shift_lead', pin: '2580' });
  // Bounded wait (200 × 100 ms) for the demo modules' first work queue, for the agent's proposals.
  for (let i = 0; i < 200; i++) {
    site.ingestor.commitAll();
    if (site.catalog.getTable({ database: 'site_demo', table: 'work_queue' }).scanRows().length >= 30) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('getProposal: an approved proposal carries the state its approval was checked against; an open or rejected one none', async () => {
  const api = site.service;
  const lead = session();
  await api.call('signIn', { user: 'Lena', secret: '2580' }, lead);
  site.runAgent();
  const open = (await api.call('listProposals', { status: ['open'] }, lead)).filter((p) => p.module);
  expect(open.length).toBeGreaterThan(1);
  const [approve, reject] = open as [(typeof open)[0], (typeof open)[0]];
  expect((await api.call('getProposal', { id: approve.id }, lead)).checked).toEqual([]);

  expect((await api.call('decide', { id: approve.id, decision: 'approve' }, lead)).outcome).toBe('approved');
  const detail = await api.call('getProposal', { id: approve.id }, lead);
  const tag = `checked-${approve.id}`;
  // Every table the re-check read, as evidence.ts reports it (what `tilstand evidence` prints).
  const report = evidenceReport(site.catalog, 'site_demo', approve.id).checked;
  expect(report.length).toBeGreaterThan(0);
  expect(detail.checked?.map((c) => [c.table, c.snapshotId, c.tag, c.tagExists, c.matchesEvidence])).toEqual(report.map((c) => [c.table, c.snapshotId, tag, c.tagExists, c.matchesEvidence]));
  // A table the evidence cites: its tag kept, its cited rows read there, as the agent read them
  // (nothing changed between the run and the approval), with the table's column types.
  const cited = detail.evidence.find((e) => e.rows.length > 0)!;
  const c = detail.checked!.find((x) => x.table === cited.table)!;
  expect(c).toMatchObject({ tag, tagExists: true, matchesEvidence: true });
  expect(c.snapshotId).toBe(site.catalog.getTable({ database: 'site_demo', table: cited.table }).tags.get(tag).snapshot.id);
  expect(c.tagRetainedUntilMs).toBeGreaterThan(Date.now());
  expect(c.rows).toEqual(cited.rows);
  expect(c.types).toEqual(cited.types);
  // Nothing differs, and the columns are named by role: the key first in the UI, the module's sequence number last.
  expect(c).toMatchObject({ changedColumns: [], changedCells: c.rows.map(() => []) });
  expect(cited.keyColumns).toEqual(site.catalog.getTable({ database: 'site_demo', table: cited.table }).schema.primaryKeys);
  expect(cited.sequenceColumns).toEqual(cited.table === 'stock' ? ['inventory_seq', 'commerce_seq', 'procurement_seq'] : ['ops_seq']);
  expect(c.sequenceColumns).toEqual(cited.sequenceColumns);

  expect((await api.call('decide', { id: reject.id, decision: 'reject' }, lead)).outcome).toBe('rejected');
  expect((await api.call('getProposal', { id: reject.id }, lead)).checked).toEqual([]);
});
