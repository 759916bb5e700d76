// Write-back through a real aedes broker on 127.0.0.1 (port 0): the command message, acks,
// applied from state, failure, timeout and resend. The "module" is a plain MQTT client here
// (core/inbox may not import core/ingest's ModuleClient; test/agents/full-loop.test.ts uses it).
import { Aedes } from 'aedes';
import Database from 'better-sqlite3';
import mqtt, { type MqttClient } from 'mqtt';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { Inbox } from './inbox.ts';
import { notSentDetail, situationKey, type Proposal, type ProposalInput } from './proposal.ts';
import { UserStore } from './users.ts';
import { WriteBack, type WriteBackOptions } from './write-back.ts';

const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
let dir: string;
let now: number;
let db: Database.Database;
let inbox: Inbox;
let aedes: Aedes;
let server: Server;
let url: string;
const clients: MqttClient[] = [];
const writeBacks: WriteBack[] = [];

async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function client(id: string): Promise<MqttClient> {
  const c = mqtt.connect(url, { clientId: id, reconnectPeriod: 0 });
  clients.push(c);
  await new Promise<void>((resolve, reject) => {
    c.once('connect', () => resolve());
    c.once('error', reject);
  });
  return c;
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-writeback-'));
  now = T0;
  db = new Database(join(dir, 'site.db'));
  const users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, nowMs: () => now });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
  inbox = Inbox.open({ catalog: new Catalog(join(dir, 'warehouse'), { clock: () => now }), database: 'site_s1', users, recheck: () => ({ holds: true, snapshots: {} }), clock: () => now, onWarning: () => undefined });
  aedes = new Aedes();
  await aedes.listen();
  server = createServer((s) => aedes.handle(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const w of writeBacks.splice(0)) w.stop();
  for (const c of clients.splice(0)) await c.endAsync(true);
  await new Promise<void>((r) => aedes.close(() => r()));
  await new Promise<void>((r) => server.close(() => r()));
  inbox.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function proposal(job: string): ProposalInput {
  return {
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
    runId: 'r1',
  };
}

/** The site's side: the internal client publishes commands and listens to acks. */
async function writeBack(o: Partial<WriteBackOptions> & { effect?: { seen: boolean } } = {}): Promise<WriteBack> {
  const tilstand = await client('tilstand-s1-site');
  await tilstand.subscribeAsync('tilstand/s1/acks/+', { qos: 1 });
  const effect = o.effect ?? { seen: false };
  const wb = new WriteBack({
    inbox,
    publish: async (topic, payload) => void (await tilstand.publishAsync(topic, payload, { qos: 1 })),
    onAck: (h) => {
      tilstand.on('message', h);
      return () => tilstand.off('message', h);
    },
    effectSeen: () => effect.seen,
    clock: () => now,
    appliedTimeoutMs: 60_000,
    onWarning: () => undefined,
    ...o,
  });
  writeBacks.push(wb);
  return wb;
}

/** A module that records commands and answers each with `answer(command)`. */
async function module(answer: (c: Record<string, unknown>) => Record<string, unknown> | undefined): Promise<Record<string, unknown>[]> {
  const m = await client('tilstand-s1-operations');
  const seen: Record<string, unknown>[] = [];
  m.on('message', (_t, payload) => {
    const c = JSON.parse(payload.toString()) as Record<string, unknown>;
    seen.push(c);
    const a = answer(c);
    if (a) m.publish('tilstand/s1/acks/operations', JSON.stringify({ command_id: c.command_id, module: 'operations', ts_ms: now, ...a }), { qos: 1 });
  });
  await m.subscribeAsync('tilstand/s1/commands/operations', { qos: 1 });
  return seen;
}

async function approve(job: string): Promise<Proposal> {
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposal(job)], withdrawals: [] }).created;
  const r = await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111', comment: 'go ahead' });
  expect(r.outcome).toBe('approved');
  return p!;
}

describe('write-back', () => {
  it('publishes the command with the proposal id as command_id and the user, tracks the ack, then applied from state', async () => {
    const effect = { seen: false };
    const wb = await writeBack({ effect });
    const commands = await module(() => ({ ok: true, result: { job_id: 'J-1', status: 'in_progress' } }));
    const p = await approve('J-1');
    await until(() => inbox.get(p.id)!.command!.state === 'acknowledged', 'the ack');
    expect(commands).toEqual([
      { job_id: 'J-1', resource_id: 'M-1', command_id: p.id, action: 'assign_job', proposal_id: p.id, requested_by: 'lena', approved_at_ms: T0, comment: 'go ahead', ts_ms: T0, expires_at_ms: T0 + 60_000 },
    ]);
    expect(inbox.get(p.id)!.command).toMatchObject({ topic: 'tilstand/s1/commands/operations', sentAtMs: T0, detail: '{"job_id":"J-1","status":"in_progress"}' });
    wb.poll();
    expect(inbox.get(p.id)!.command!.state).toBe('acknowledged');
    effect.seen = true;
    wb.poll();
    expect(inbox.get(p.id)!.command!.state).toBe('applied');
    expect(inbox.commandsInFlight()).toEqual([]);
    expect(inbox.history(p.id).map((e) => `${e.event}:${e.actor}`)).toEqual(['proposed:agent-r1', 'approved:lena', 'command_sent:write-back', 'command_acknowledged:operations', 'command_applied:state']);
  });

  it('a wall clock stepped back does not hold a command: timeout and resend also count by the monotonic clock', async () => {
    let mono = 0;
    const sent: string[] = [];
    const wb = await writeBack({ monotonic: () => mono, resendAfterMs: 20_000 });
    await module((c) => void sent.push(String(c.command_id)));
    const p = await approve('J-1');
    await until(() => inbox.get(p.id)!.command!.state === 'sent' && sent.length === 1, 'the send');
    // NTP sets the wall clock back an hour; 25 s pass: resent, as 20 s have passed.
    now -= 3600_000;
    now += 25_000;
    mono += 25_000;
    wb.poll();
    await until(() => sent.length === 2, 'the resend');
    // 61 s after the send by the monotonic clock (the wall clock still shows an hour less): timed out.
    now += 36_000;
    mono += 36_000;
    wb.poll();
    expect(inbox.get(p.id)!.command).toMatchObject({ state: 'timed_out', detail: 'not applied 61 s after it was sent (last state: sent)' });
  });

  it('a refusing module makes the command failed, with its error', async () => {
    await writeBack();
    await module(() => ({ ok: false, error: 'resource M-1 is busy' }));
    const p = await approve('J-1');
    await until(() => inbox.get(p.id)!.command!.state === 'failed', 'the failure');
    expect(inbox.get(p.id)!.command!.detail).toBe('resource M-1 is busy');
  });

  it('no effect within appliedTimeoutMs → timed_out; a late ack still counts', async () => {
    const wb = await writeBack();
    let answer = false;
    await module(() => (answer ? { ok: true } : undefined));
    const p = await approve('J-1');
    await until(() => inbox.get(p.id)!.command!.state === 'sent', 'the send');
    now += 30_000;
    wb.poll();
    expect(inbox.get(p.id)!.command!.state).toBe('sent');
    now += 31_000;
    wb.poll();
    expect(inbox.get(p.id)!.command).toMatchObject({ state: 'timed_out', detail: 'not applied 61 s after it was sent (last state: sent)' });
    // The module comes back and answers a redelivery of the same command id.
    answer = true;
    const m = clients.at(-1)!;
    m.publish('tilstand/s1/acks/operations', JSON.stringify({ command_id: p.id, module: 'operations', ok: true, ts_ms: now }), { qos: 1 });
    // Logged, and the command stays timed out as acknowledged (late-first-ack.test.ts).
    await until(() => inbox.history(p.id).at(-1)?.event === 'command_acknowledged', 'the late ack');
    expect(inbox.get(p.id)!.command).toMatchObject({ state: 'timed_out', detail: 'not applied 61 s after it was sent (last state: acknowledged)' });
  });

  it('an acknowledged command whose effect is late times out, stays awaited, and is applied when the effect shows', async () => {
    const effect = { seen: false };
    const wb = await writeBack({ effect });
    await module(() => ({ ok: true, result: 'assigned' }));
    const p = await approve('J-1');
    await until(() => inbox.get(p.id)!.command!.state === 'acknowledged', 'the ack');
    now += 61_000;
    wb.poll();
    expect(inbox.get(p.id)!.command).toMatchObject({ state: 'timed_out', detail: 'not applied 61 s after it was sent (last state: acknowledged)' });
    expect(inbox.commandsInFlight()).toEqual([]);
    expect(inbox.commandsAwaitingEffect().map((x) => x.id)).toEqual([p.id]);
    expect(inbox.commandsUnderway().map((x) => x.id)).toEqual([p.id]);
    // The module's event arrives ten minutes late.
    now += 600_000;
    effect.seen = true;
    wb.poll();
    expect(inbox.get(p.id)!.command!.state).toBe('applied');
    expect(inbox.commandsUnderway()).toEqual([]);
    expect(inbox.history(p.id).map((e) => [e.event, e.actor])).toContainEqual(['command_applied', 'state']);
  });

  it('a command the broker took but the module never acknowledged is published again, with the same command_id', async () => {
    const wb = await writeBack({ resendAfterMs: 20_000 });
    let dropped = true; // as when the broker dropped the queued command (another client took the session)
    const commands = await module(() => (dropped ? undefined : { ok: true }));
    const p = await approve('J-1');
    await until(() => commands.length === 1 && inbox.get(p.id)!.command!.state === 'sent', 'the send');
    now += 10_000;
    wb.poll();
    await new Promise((r) => setTimeout(r, 100));
    expect(commands.length).toBe(1); // not before resendAfterMs
    dropped = false;
    now += 10_000;
    wb.poll();
    await until(() => inbox.get(p.id)!.command!.state === 'acknowledged', 'the ack of the copy');
    expect(commands.map((c) => c.command_id)).toEqual([p.id, p.id]);
    expect(commands[1]!.ts_ms).toBe(T0 + 20_000);
    // A copy keeps the first send's expiry: the module refuses it once Tilstand stops waiting.
    expect(commands.map((c) => c.expires_at_ms)).toEqual([T0 + 60_000, T0 + 60_000]);
    // The timeout still counts from the first send, and an acknowledged command is not sent again.
    expect(inbox.get(p.id)!.command!.sentAtMs).toBe(T0);
    now += 30_000;
    wb.poll();
    await new Promise((r) => setTimeout(r, 100));
    expect(commands.length).toBe(2);
  });

  it('a failed publish leaves the command pending; resume sends it with the same command_id', async () => {
    let fail = true;
    const tilstand = await client('tilstand-s1-site');
    const wb = new WriteBack({
      inbox,
      publish: async (topic, payload) => {
        if (fail) throw new Error('broker unreachable');
        await tilstand.publishAsync(topic, payload, { qos: 1 });
      },
      onAck: () => undefined,
      effectSeen: () => false,
      clock: () => now,
      onWarning: () => undefined,
    });
    writeBacks.push(wb);
    const commands = await module(() => undefined);
    const p = await approve('J-1');
    expect(inbox.get(p.id)!.command!.state).toBe('pending');
    fail = false;
    await wb.resume();
    await until(() => commands.length === 1, 'the resent command');
    expect(commands[0]!.command_id).toBe(p.id);
    expect(inbox.get(p.id)!.command!.state).toBe('sent');
  });

  it('a command not sent within appliedTimeoutMs of its approval is not sent: it fails, saying so, and the situation may be proposed again', async () => {
    // Approved while no write-back could publish (the broker down, or a crash before the publish).
    const late = await approve('J-1');
    now += 40_000;
    const inTime = await approve('J-2');
    now += 21_000;
    const wb = await writeBack(); // appliedTimeoutMs 60 s
    const commands = await module(() => undefined);
    await wb.resume();
    await until(() => commands.length === 1, 'the command still in time');
    await new Promise((r) => setTimeout(r, 100));
    // J-1, approved 61 s ago, is never published; J-2 (21 s) is, and expires 60 s after its approval, not its send.
    expect(commands.map((c) => [c.command_id, c.expires_at_ms])).toEqual([[inTime.id, T0 + 40_000 + 60_000]]);
    expect(inbox.get(late.id)!.command).toMatchObject({ state: 'failed', detail: 'not sent within 60 s of the approval (61 s ago): nothing was done; decide again if it still holds' });
    expect(inbox.history(late.id).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_failed']);
    wb.poll();
    await new Promise((r) => setTimeout(r, 100));
    expect(commands).toHaveLength(1);
    // Nothing was done: the situation is proposed again for a person to decide.
    expect(inbox.submit({ runId: 'r2', proposals: [proposal('J-1')], withdrawals: [] }).created).toHaveLength(1);
  });

  it('commands given up unsent do not quiet their situation: only failures of sent commands count toward FAILURES_TO_QUIET', async () => {
    // No write-back attached: each approval's command stays pending until it is given up, as the
    // write-back does after appliedTimeoutMs (a broker down for an hour sees several such).
    for (const run of ['r1', 'r2', 'r3']) {
      const [p] = inbox.submit({ runId: run, proposals: [proposal('J-1')], withdrawals: [] }).created;
      expect(p, `proposed again in ${run}`).toBeDefined();
      expect((await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
      inbox.markCommand(p!.id, 'failed', notSentDetail(60_000, 61_000));
    }
    // Two failures of sent commands (the module refused twice) do quiet it.
    for (const run of ['r4', 'r5']) {
      const [p] = inbox.submit({ runId: run, proposals: [proposal('J-2')], withdrawals: [] }).created;
      expect((await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
      inbox.markCommand(p!.id, 'sent', null);
      inbox.markCommand(p!.id, 'failed', 'refused by the module: not now');
    }
    expect(inbox.submit({ runId: 'r6', proposals: [proposal('J-2')], withdrawals: [] }).suppressed).toEqual([proposal('J-2').situationKey]);
  });

  it('a broker that never sends PUBACK does not hold the approval: it returns with the command pending, and a poll sends it', async () => {
    const held: (() => void)[] = [];
    aedes.authorizePublish = (_client, packet, done) => {
      if (packet.topic.startsWith('tilstand/s1/commands/')) held.push(() => done(null));
      else done(null);
    };
    const wb = await writeBack({ publishTimeoutMs: 200 });
    await module(() => ({ ok: true }));
    const approving = approve('J-1');
    const outcome = await Promise.race([approving.then(() => 'returned'), new Promise((r) => setTimeout(() => r('still waiting after 5 s'), 5000))]);
    expect(outcome).toBe('returned');
    const p = await approving;
    expect(inbox.get(p.id)!.command!.state).toBe('pending');
    expect(inbox.get(p.id)!.decision).toMatchObject({ kind: 'approved', by: 'lena' });
    // The broker recovers; the write-back loop sends the command again.
    aedes.authorizePublish = (_client, _packet, done) => done(null);
    for (const release of held.splice(0)) release();
    wb.poll();
    await until(() => inbox.get(p.id)!.command!.state === 'acknowledged', 'the ack');
  });

  it('resume does not publish again a command poll sent while resume waited for an earlier publish', async () => {
    // Approved while no write-back listens (as before a restart): both commands stay pending.
    const p1 = await approve('J-1');
    const p2 = await approve('J-2');
    const sent: { id: string; expires: number }[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((r) => (releaseFirst = r));
    const wb = new WriteBack({
      inbox,
      publish: async (_topic, payload) => {
        const c = JSON.parse(payload) as { command_id: string; expires_at_ms: number };
        sent.push({ id: c.command_id, expires: c.expires_at_ms });
        if (c.command_id === p1.id) await firstHeld; // the broker is slow to take the first
      },
      onAck: () => undefined,
      effectSeen: () => false,
      clock: () => now,
      appliedTimeoutMs: 60_000,
      onWarning: () => undefined,
    });
    writeBacks.push(wb);
    const resumed = wb.resume(); // waits for p1's publish
    now += 1000;
    wb.poll(); // p1 is being sent; p2 goes now
    await until(() => inbox.get(p2.id)!.command!.state === 'sent', 'p2 sent by poll');
    now += 30_000;
    releaseFirst();
    await resumed;
    // Once (a copy not sent yet expires appliedTimeoutMs after the approval, when it is sent at all).
    expect(sent.filter((s) => s.id === p2.id).map((s) => s.expires)).toEqual([T0 + 60_000]);
  });

  it('an ack handled before the publish returns (the module was quicker than the PUBACK) is kept: sent, then acknowledged', async () => {
    let wb!: WriteBack;
    const published: string[] = [];
    wb = new WriteBack({
      inbox,
      publish: async (_topic, payload) => {
        const c = JSON.parse(payload) as { command_id: string };
        published.push(c.command_id);
        wb.handleAck('tilstand/s1/acks/operations', Buffer.from(JSON.stringify({ command_id: c.command_id, module: 'operations', ok: true, result: { resource: 'M-1' } })));
      },
      onAck: () => undefined,
      effectSeen: () => false,
      clock: () => now,
      resendAfterMs: 60_000,
      onWarning: () => undefined,
    });
    writeBacks.push(wb);
    const p = await approve('J-1');
    expect(inbox.get(p.id)!.command).toMatchObject({ state: 'acknowledged', sentAtMs: T0, detail: '{"resource":"M-1"}' });
    expect(inbox.history(p.id).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_acknowledged']);
    // Acknowledged: not published again.
    now += 61_000;
    wb.poll();
    expect(published).toEqual([p.id]);
  });

  it('ignores acks that are not its own, malformed, or from the wrong module', async () => {
    const wb = await writeBack();
    await module(() => undefined);
    const p = await approve('J-1');
    await until(() => inbox.get(p.id)!.command!.state === 'sent', 'the send');
    wb.handleAck('tilstand/s1/acks/operations', Buffer.from('not json'));
    wb.handleAck('tilstand/s1/acks/operations', Buffer.from(JSON.stringify({ command_id: 'someone-else', ok: true })));
    wb.handleAck('tilstand/s1/acks/inventory', Buffer.from(JSON.stringify({ command_id: p.id, module: 'inventory', ok: true })));
    wb.handleAck('tilstand/s2/acks/operations', Buffer.from(JSON.stringify({ command_id: p.id, module: 'operations', ok: true })));
    expect(inbox.get(p.id)!.command!.state).toBe('sent');
  });
});
