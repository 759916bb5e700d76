// An event held far ahead of its stream, dropped from a full reorder buffer (CONTRACTS.md §4, "An
// event far ahead of its stream"). Being the highest held, it is the first an overflow drops, and
// the resync's resend from the stream's position never brings a seq the module has not reached:
// dropped like an early event it was gone with no letter, only
// tilstand_ingest_reorder_overflow_drops_total moved. Now it is a `seq_far_ahead` letter at once;
// the early events dropped with it get none (their resend comes) and are applied in their turn.
import { describe, expect, it } from 'vitest';
import type { Ingestor } from './ingestor.ts';
import { moduleEvent, seededIngestor, SITE, stockEvent, topic } from './test-support/seeded-ingestor.ts';

const T0 = Date.UTC(2026, 11, 7, 8, 0, 0);
const TOPIC = `tilstand/${SITE}/events/inventory/stock`;
const FAR = 1_000_000;
/** Held events per stream: the far one and 7 early ones fill it. */
const BUFFER = 8;

const env = seededIngestor({ tmpPrefix: 'tilstand-far-ahead-overflow-', t0: T0, defaults: { sequencer: { reorder_buffer_max: BUFFER } } });
const inv = (seq: number, qty: number, item = `I-${seq}`) => stockEvent(seq, item, qty, env.now);

/**
 * seq 1..10; seq 1,000,000; 11..20 in order (the stream goes on below it, a second apart); then
 * early ones (21 lost): 22..28 fill the buffer beside the far one; 35 overflows (the far one is
 * dropped, 35 held); 29 overflows (35, early and held, is dropped); 30 overflows (dropped itself).
 * Returns the far event's position.
 */
async function toOverflow(i: Ingestor): Promise<bigint> {
  for (let seq = 1; seq <= 10; seq++) await i.accept(TOPIC, inv(seq, seq));
  const far = await i.accept(TOPIC, inv(FAR, 7, 'FAR-1'));
  for (let seq = 11; seq <= 20; seq++) {
    env.now += 1_000;
    await i.accept(TOPIC, inv(seq, seq));
  }
  for (const seq of [22, 23, 24, 25, 26, 27, 28, 35, 29, 30]) await i.accept(TOPIC, inv(seq, seq));
  return far;
}

/** The module's resend from 21 (through 35, its newest). */
async function resend(i: Ingestor): Promise<void> {
  for (let seq = 21; seq <= 35; seq++) await i.accept(TOPIC, inv(seq, seq));
}

describe('Ingestor: an event far ahead of its stream dropped from a full reorder buffer', () => {
  it('is a seq_far_ahead letter; the early events dropped are not lettered and are applied after the resend', async () => {
    const warnings: string[] = [];
    const resyncs: number[] = [];
    const i = env.start({ onWarning: (w) => warnings.push(w), publishResync: (_m, _s, from) => resyncs.push(from) });
    const far = await toOverflow(i);
    expect(resyncs).toEqual([21, 21, 21]);
    expect(i.health().heldEvents).toBe(BUFFER); // 22..29
    expect(i.listDeadLetters().map((d) => [d.position, d.seq])).toEqual([[far, FAR]]); // at once, not 35 nor 30
    await resend(i);
    i.commitAll();
    i.tick();
    const letters = i.listDeadLetters();
    expect(letters.map((d) => [d.position, d.reason, d.seq, d.status, d.path])).toEqual([[far, 'seq_far_ahead', FAR, 'open', 'source.seq']]);
    expect(letters[0]!.detail).toMatch(
      /^seq 1000000 of inventory\/stock was dropped from a full reorder buffer .* went on in order below it \(at seq 20\); the module's resend from seq 21 does not bring .* If the module sends this seq again in its turn it is applied then; this letter is closed as replayed if that is this event \(the same payload\), else it is a copy: dismiss it\. A replay is refused unless the stream skipped this seq/,
    );
    expect(warnings.some((w) => /inventory\/stock seq 1000000 was dropped from a full reorder buffer .*dead letter at journal position/.test(w))).toBe(true);
    expect(i.metrics()).toMatch(/\ntilstand_ingest_reorder_overflow_drops_total\{site="s1"\} 3\n/);
    // Nothing held, every seq of the stream applied in order, the far image not; the journal moves past it.
    expect(i.health().heldEvents).toBe(0);
    for (let seq = 1; seq <= 35; seq++) expect(env.stockRow(`I-${seq}`)).toMatchObject({ on_hand: seq, inventory_seq: seq });
    expect(env.stockRow('FAR-1')).toBeUndefined();
    expect(env.journal.getCheckpoint('ingest')).toBeGreaterThan(far);
    // The same replay rule as a far_ahead letter of tick's: refused while the stream is below it.
    expect(await i.replayDeadLetters()).toMatchObject({ replayed: 0, failed: 1 });
    expect(i.listDeadLetters()[0]!.detail).toMatch(/^not replayed: inventory\/stock is at seq 35, below 1000000/);
  });

  it('a restart after its letter: the letter is durable, the journal is not read from before it, no second letter', async () => {
    const i = env.start();
    const far = await toOverflow(i);
    await resend(i);
    i.close();
    env.open.splice(env.open.indexOf(i), 1);
    const j = env.start();
    expect(j.health().heldEvents).toBe(0);
    await j.accept(TOPIC, inv(36, 36));
    j.commitAll();
    expect(j.listDeadLetters().map((d) => [d.position, d.reason, d.status])).toEqual([[far, 'seq_far_ahead', 'open']]);
    expect(j.deadLetterCount()).toBe(1);
    expect(env.stockRow('I-36')).toMatchObject({ on_hand: 36, inventory_seq: 36 });
  });

  it('a kill before anything committed: the journal read at the reopen (every event in the same ms) makes the letter again, once', async () => {
    const i = env.start();
    const far = await toOverflow(i);
    await resend(i);
    i.abandon();
    env.open.splice(env.open.indexOf(i), 1);
    const j = env.start();
    expect(j.health().heldEvents).toBe(0);
    j.commitAll();
    expect(j.listDeadLetters().map((d) => [d.position, d.reason, d.seq])).toEqual([[far, 'seq_far_ahead', FAR]]);
    expect(j.deadLetterCount()).toBe(1);
    for (let seq = 1; seq <= 35; seq++) expect(env.stockRow(`I-${seq}`)).toMatchObject({ on_hand: seq, inventory_seq: seq });
  });

  it('a kill while another stream held the journal position before it: the letter, committed, is not made again, nor reopened once dismissed', async () => {
    const reservation = (seq: number) => moduleEvent('commerce', 'reservations', seq, { item: 'R-1', location: 'L1', reserved_qty: seq }, 'commerce.reservations', env.now);
    const i = env.start();
    await i.accept(topic('commerce', 'reservations'), reservation(1));
    const held = await i.accept(topic('commerce', 'reservations'), reservation(3)); // waits for 2: every table's position stays before it
    const far = await toOverflow(i);
    await resend(i);
    i.commitAll();
    i.tick();
    expect(env.journal.getCheckpoint('ingest')).toBe(held - 1n);
    expect(i.dismissDeadLetters([far], 'Lena', 'a forged seq')).toEqual({ dismissed: 1, notOpen: [] });
    i.commitAll();
    i.abandon();
    env.open.splice(env.open.indexOf(i), 1);
    const j = env.start();
    // The journal is read from before the far event again; its letter is in dead_letters already.
    expect(j.health().heldEvents).toBe(1); // commerce's seq 3 only
    let seq = 35;
    for (let t = 0; t < 16 * 6; t++) {
      await j.accept(TOPIC, inv(++seq, seq));
      env.now += 10_000;
      j.tick();
    }
    j.commitAll();
    expect(j.listDeadLetters().map((d) => [d.position, d.reason, d.status])).toEqual([[far, 'seq_far_ahead', 'dismissed']]);
    expect(j.deadLetterCount()).toBe(0);
    expect(j.health().heldEvents).toBe(0);
  }, 60_000);

  it("the same for a letter tick gave up after far_ahead_give_up_ms: a kill while another stream's gap held the position before it", async () => {
    const reservation = (seq: number) => moduleEvent('commerce', 'reservations', seq, { item: 'R-1', location: 'L1', reserved_qty: seq }, 'commerce.reservations', env.now);
    const options = { sequencer: { reorder_buffer_max: BUFFER, gap_give_up_ms: Infinity } };
    const i = env.start(options);
    await i.accept(topic('commerce', 'reservations'), reservation(1));
    await i.accept(topic('commerce', 'reservations'), reservation(3)); // waits for 2 (for ever, with Infinity)
    let seq = 0;
    for (; seq < 10; ) await i.accept(TOPIC, inv(++seq, seq));
    const far = await i.accept(TOPIC, inv(FAR, 7, 'FAR-1'));
    const goOn = async (j: Ingestor, minutes: number) => {
      for (let t = 0; t < minutes * 6; t++) {
        await j.accept(TOPIC, inv(++seq, seq));
        env.now += 10_000;
        j.tick();
      }
      j.commitAll();
    };
    await goOn(i, 16);
    expect(i.listDeadLetters().map((d) => [d.position, d.reason])).toEqual([[far, 'seq_far_ahead']]);
    expect(i.dismissDeadLetters([far], 'Lena', 'a forged seq')).toEqual({ dismissed: 1, notOpen: [] });
    i.commitAll();
    i.abandon();
    env.open.splice(env.open.indexOf(i), 1);
    const j = env.start(options);
    expect(j.health().heldEvents).toBe(1); // commerce's seq 3 only
    await goOn(j, 16);
    expect(j.listDeadLetters().map((d) => [d.position, d.reason, d.status])).toEqual([[far, 'seq_far_ahead', 'dismissed']]);
    expect(j.deadLetterCount()).toBe(0);
  }, 60_000);
});
