// A site rebuilt by `tilstand restore` hands the restore's time from its note to the write-back
// (Decisions `restoredAtMs`): only there can a module's ack of a proposal made before the restore,
// which the inbox never approved, be an approval lost with the old PC (core/inbox write-back.ts,
// approval-lost-in-restore.test.ts). A site started without the restore's time took such an ack
// for one of no proposal of its own and dropped it. Here the note says the restore ran an hour
// ahead, so a proposal made now counts as one made before it.
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

it("a running site restored from HQ records a module's ack of a proposal older than the restore as an approval not on record", async () => {
  const data = join(dir, 'd');
  await initDataDir({ data, site: 'north', scrypt: { N: 1024, r: 8, p: 1 } });
  writeFileSync(join(data, RESTORE_NOTE), JSON.stringify({ site: 'north', restoredAtMs: Date.now() + 3_600_000, resync: [] }));
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  try {
    const d = site.decisions!;
    const [p] = d.inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
    d.writeBack.handleAck('tilstand/north/acks/operations', Buffer.from(JSON.stringify({ command_id: p!.id, module: 'operations', ok: true, result: 'assigned' })));
    expect(d.inbox.get(p!.id)!.status).toBe('approved');
    expect(d.inbox.get(p!.id)!.decision).toMatchObject({ kind: 'approved', by: '?' });
    expect(d.inbox.get(p!.id)!.command!.state).toBe('acknowledged');
  } finally {
    await site.stop();
  }
}, 60_000);
