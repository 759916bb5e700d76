// An event held far ahead of a stream that keeps going in order (CONTRACTS.md §4, "An event far
// ahead of its stream"; DESIGN.md, "Failure cases"). Held until the stream reached it, it kept
// every table's journal position, the journal's checkpoint and so prune before it: the journal
// grew past its byte retention until the disk budget held every module's PUBACKs.
import { describe, expect, it } from 'vitest';
import type { Ingestor } from './ingestor.ts';
import { DEFAULT_SEQUENCER_OPTIONS } from './sequencer.ts';
import { seededIngestor, SITE, stockEvent } from './test-support/seeded-ingestor.ts';

const T0 = Date.UTC(2026, 11, 7, 8, 0, 0);
const TOPIC = `tilstand/${SITE}/events/inventory/stock`;
const FAR = 1_000_000;
/** The site's journal.retentionBytesMax in small. */
const RETENTION_BYTES = 64 * 1024;

const env = seededIngestor({ tmpPrefix: 'tilstand-far-ahead-', t0: T0 });
const start = env.start;
const stockRow = env.stockRow;
const inv = (seq: number, item: string, qty: number) => stockEvent(seq, item, qty, env.now);

/**
 * seq 1..10, then seq 1,000,000, then the stream goes on in order: 10 events every 10 s for
 * `minutes`, each step ticked and the journal pruned as core/site does (keepAfter = the ingest
 * checkpoint, maxBytes = the retention). Returns the far event's position and what each step saw.
 */
async function run(i: Ingestor, minutes: number) {
  let seq = 0;
  const batch = async (n: number) => {
    const ps: Promise<bigint>[] = [];
    for (let k = 0; k < n; k++) ps.push(i.accept(TOPIC, inv(++seq, `I-${seq % 50}`, seq)));
    await Promise.all(ps);
  };
  await batch(10);
  const far = await i.accept(TOPIC, inv(FAR, 'FAR-1', 7));
  const steps: { atMin: number; checkpoint: bigint; bytes: number }[] = [];
  for (let t = 0; t < minutes * 6; t++) {
    await batch(10);
    env.now += 10_000;
    i.tick();
    const keepAfter = env.journal.getCheckpoint('ingest') ?? 0n;
    await env.journal.prune({ maxBytes: RETENTION_BYTES, keepAfter });
    steps.push({ atMin: (t + 1) / 6, checkpoint: keepAfter, bytes: env.journal.bytesUsed() });
  }
  return { far, steps, lastSeq: seq };
}

describe('Ingestor: an event held far ahead of a stream that keeps going', () => {
  it('is given up as a dead letter after far_ahead_give_up_ms from its own arrival, so the checkpoint, prune and the journal bytes move on', async () => {
    const warnings: string[] = [];
    const i = start({ onWarning: (w) => warnings.push(w) });
    const { far, steps, lastSeq } = await run(i, 40);
    const at = (min: number) => steps.find((s) => s.atMin >= min)!;
    console.log(`far ahead: journal bytes at 5/15/25/40 min: ${[5, 15, 25, 40].map((m) => at(m).bytes).join(' / ')}; checkpoint at 40 min ${at(40).checkpoint} (far event at ${far})`);
    const giveUpMin = DEFAULT_SEQUENCER_OPTIONS.far_ahead_give_up_ms / 60_000;
    // Before its bound the event waits (its predecessors could still come)…
    expect(at(giveUpMin - 1).checkpoint).toBeLessThan(far);
    // …then it is a letter: the journal's checkpoint passes it and prune keeps the journal in its retention.
    expect(at(giveUpMin + 1).checkpoint).toBeGreaterThan(far);
    expect(at(40).checkpoint).toBeGreaterThan(at(giveUpMin + 1).checkpoint);
    expect(at(40).bytes).toBeLessThan(at(giveUpMin + 1).bytes * 1.5);
    i.commitAll();
    const letters = i.listDeadLetters();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ position: far, status: 'open', reason: 'seq_far_ahead', path: 'source.seq', seq: FAR, module: 'inventory', stream: 'stock' });
    expect(letters[0]!.detail).toMatch(/seq 1000000 of inventory\/stock was held 15 min .* the stream went on in order below it \(at seq \d+\)/);
    expect(warnings.some((w) => /inventory\/stock seq 1000000 .*dead letter/.test(w))).toBe(true);
    // Nothing lost, order kept: the far image is not in the table, the stream's own events are.
    expect(stockRow('FAR-1')).toBeUndefined();
    expect(stockRow(`I-${lastSeq % 50}`)).toMatchObject({ on_hand: lastSeq, inventory_seq: lastSeq });
    expect(i.health().heldEvents).toBe(0);
  }, 120_000);

  it('held at a kill, it is held again after the reopen and given up after its bound in that run; a reopen after its letter makes no second one', async () => {
    const i = start();
    const { far, lastSeq } = await run(i, 10);
    i.abandon(); // kill -9 while it is held
    env.open.splice(env.open.indexOf(i), 1);
    const j = start();
    expect(j.health().heldEvents).toBe(1); // the journal's read from before it holds it again
    let seq = lastSeq;
    for (let t = 0; t < 16 * 6; t++) {
      await j.accept(TOPIC, inv(++seq, `I-${seq % 50}`, seq));
      env.now += 10_000;
      j.tick();
    }
    j.commitAll();
    expect(j.listDeadLetters().map((d) => [d.position, d.seq, d.status])).toEqual([[far, FAR, 'open']]);
    expect(j.health().heldEvents).toBe(0);
    expect(env.journal.getCheckpoint('ingest')).toBeGreaterThan(far);
    j.close();
    env.open.splice(env.open.indexOf(j), 1);
    const k = start();
    expect(k.health().heldEvents).toBe(0);
    k.commitAll();
    expect(k.listDeadLetters().map((d) => d.position)).toEqual([far]);
    expect(stockRow(`I-${seq % 50}`)).toMatchObject({ on_hand: seq, inventory_seq: seq });
  }, 120_000);

  it('with gap_give_up_ms Infinity too (a gap may wait for ever; an event the stream goes on below may not)', async () => {
    const i = start({ sequencer: { gap_give_up_ms: Infinity } });
    const { far, steps } = await run(i, 20);
    expect(steps.at(-1)!.checkpoint).toBeGreaterThan(far);
    i.commitAll();
    expect(i.listDeadLetters().map((d) => [d.position, d.seq])).toEqual([[far, FAR]]);
  }, 120_000);
});
