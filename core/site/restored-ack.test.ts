// A site rebuilt by `tilstand restore` hands the restore's time from its note to the write-back
// (Decisions `restoredAtMs`): only there can a module's ack of a proposal made before the restore,
// which the inbox never approved, be an approval lost with the old PC (core/inbox write-back.ts,
// approval-lost-in-restore.test.ts). A site started without the restore's time took such an ack
// for one of no proposal of its own and dropped it. Here the proposal is made by a run before the
// note is written (the old PC's), then the site starts restored.
//
// Not later than the start, though: a proposal the restored site makes itself is made after the
// restore, whatever the note says. A note an hour ahead (the PC's clock stepped back since the
// restore: a clock set to local time taken for UTC, then put right) made every proposal of that
// hour count as one made before the restore, which a module's ack alone then approved. And a note
// whose time is not a number (edited by hand, or torn) says no time to count from: as no restore.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { proposalInput } from '../inbox/test-support.ts';
import { RESTORE_NOTE } from '../sync/restore.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-restored-ack-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ack = (id: string) => Buffer.from(JSON.stringify({ command_id: id, module: 'operations', ok: true, result: 'assigned' }));
const start = (data: string) => Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });

/** A data directory whose inbox has an open proposal (made by the PC before the restore), then the note with the `restoredAtMs` given the time it is written. Returns the directory and the proposal's id. */
async function restoredWithOldProposal(name: string, restoredAtMs: (nowMs: number) => unknown): Promise<{ data: string; id: string }> {
  const data = join(dir, name);
  await initDataDir({ data, site: 'north', scrypt: { N: 1024, r: 8, p: 1 } });
  const before = await start(data);
  let id: string;
  try {
    id = before.decisions!.inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created[0]!.id;
  } finally {
    await before.stop();
  }
  await new Promise((r) => setTimeout(r, 5));
  writeFileSync(join(data, RESTORE_NOTE), JSON.stringify({ site: 'north', restoredAtMs: restoredAtMs(Date.now()), resync: [] }));
  return { data, id };
}

it("a running site restored from HQ records a module's ack of a proposal older than the restore as an approval not on record", async () => {
  const { data, id } = await restoredWithOldProposal('d', (now) => now);
  const site = await start(data);
  try {
    const d = site.decisions!;
    d.writeBack.handleAck('tilstand/north/acks/operations', ack(id));
    expect(d.inbox.get(id)!.status).toBe('approved');
    expect(d.inbox.get(id)!.decision).toMatchObject({ kind: 'approved', by: '?' });
    expect(d.inbox.get(id)!.command!.state).toBe('acknowledged');
  } finally {
    await site.stop();
  }
}, 60_000);

it('the clock stepped back since the restore (the note an hour ahead): a proposal the restored site made itself is not approved by an ack', async () => {
  const data = join(dir, 'ahead');
  await initDataDir({ data, site: 'north', scrypt: { N: 1024, r: 8, p: 1 } });
  writeFileSync(join(data, RESTORE_NOTE), JSON.stringify({ site: 'north', restoredAtMs: Date.now() + 3_600_000, resync: [] }));
  const site = await start(data);
  try {
    const d = site.decisions!;
    const [p] = d.inbox.submit({ runId: 'r2', proposals: [proposalInput('J-2', 'r2')], withdrawals: [] }).created;
    d.writeBack.handleAck('tilstand/north/acks/operations', ack(p!.id));
    expect(d.inbox.get(p!.id)!.status, 'made by this site, after the restore').toBe('open');
    expect(d.inbox.get(p!.id)!.decision).toBeNull();
  } finally {
    await site.stop();
  }
}, 60_000);

it('a note whose restoredAtMs is no number: an ack decides nothing, as on a site never restored', async () => {
  for (const [name, odd] of [
    ['text', 'yesterday'],
    ['none', undefined],
  ] as const) {
    const { data, id } = await restoredWithOldProposal(name, () => odd);
    const site = await start(data);
    try {
      const d = site.decisions!;
      d.writeBack.handleAck('tilstand/north/acks/operations', ack(id));
      expect(d.inbox.get(id)!.status, `restoredAtMs ${JSON.stringify(odd)}`).toBe('open');
    } finally {
      await site.stop();
    }
  }
}, 60_000);
