// The replay of a `seq_far_ahead` letter (CONTRACTS.md §4, "An event far ahead of its stream").
// Its event carries a seq the stream has not reached; the tables order the stream's rows by seq
// (stock's `inventory_seq`), so its image, written by a replay, won over every event the stream
// sent for those keys until the stream reached that seq — the Dead letters screen's "Replay all
// open" (and `tilstand deadletters replay` without positions) froze the row, though nobody read
// the letter's detail. Refused while the stream is below it; once the stream has passed it,
// replayed only where the stream skipped that seq (as a late event's replay): where the stream
// took its own event of it, the letter's image overwrote that one.
// Besides: an existing site's dead_letters (its reason column's description lists the reasons of
// its day) opens as it is and takes the new reason; a step of the wall clock does not age a held
// event towards the letter (the Ingestor's monotonic clock).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { DEAD_LETTERS_TABLE } from './dead-letters.ts';
import type { Ingestor } from './ingestor.ts';
import { DB, seededIngestor, SITE, stockEvent } from './test-support/seeded-ingestor.ts';

const T0 = Date.UTC(2026, 11, 7, 8, 0, 0);
const TOPIC = `tilstand/${SITE}/events/inventory/stock`;

const env = seededIngestor({ tmpPrefix: 'tilstand-far-ahead-replay-', t0: T0 });
const start = (catalog?: Catalog, monotonicClock?: () => number): Ingestor =>
  env.start({ ...(catalog ? { catalog } : {}), ...(monotonicClock ? { monotonicClock } : {}) });
const stockRow = env.stockRow;
const inv = (seq: number, item: string, qty: number) => stockEvent(seq, item, qty, env.now);

/** seq 1..10, then `far` for item A-1, then one event every 10 s in order (items I-n) for 16 minutes: the far one is a letter. */
async function letterOf(i: Ingestor, far: number): Promise<number> {
  let seq = 0;
  for (; seq < 10; ) await i.accept(TOPIC, inv(++seq, `I-${seq}`, seq));
  await i.accept(TOPIC, inv(far, 'A-1', 7));
  for (let t = 0; t < 16 * 6; t++) {
    await i.accept(TOPIC, inv(++seq, `I-${seq}`, seq));
    env.now += 10_000;
    i.tick();
  }
  i.commitAll();
  expect(i.listDeadLetters().map((d) => [d.reason, d.seq, d.status])).toEqual([['seq_far_ahead', far, 'open']]);
  return seq;
}

describe('replaying a seq_far_ahead letter', () => {
  it('is refused while its stream is below its seq: "replay all" does not freeze its rows against the stream', async () => {
    const FAR = 1_000_000;
    const i = start();
    let seq = await letterOf(i, FAR);
    // The stream's own A-1 first, then the operator presses "Replay all open" (after mending something else).
    await i.accept(TOPIC, inv(++seq, 'A-1', 5));
    i.commitAll();
    const r = await i.replayDeadLetters();
    expect(r).toMatchObject({ replayed: 0, failed: 1 });
    const [letter] = i.listDeadLetters();
    expect(letter).toMatchObject({ status: 'open', reason: 'seq_far_ahead', seq: FAR });
    expect(letter!.detail).toMatch(new RegExp(`not replayed: inventory/stock is at seq ${seq}, below ${FAR}`));
    // The stream's next event for A-1 is applied: the row follows the stream.
    await i.accept(TOPIC, inv(++seq, 'A-1', 4));
    i.commitAll();
    expect(stockRow('A-1')).toMatchObject({ on_hand: 4, inventory_seq: seq });
    // Asked for by name, the same.
    expect(await i.replayDeadLetters([letter!.position])).toMatchObject({ replayed: 0, failed: 1 });
    // Its detail says why once, however often it was tried, and keeps what it said first.
    const again = i.listDeadLetters()[0]!.detail;
    expect(again.match(/not replayed:/g)).toHaveLength(1);
    expect(again).toMatch(new RegExp(`not replayed: inventory/stock is at seq ${seq}, .* Before: seq ${FAR} of inventory/stock was held 15 min`));
    expect(stockRow('A-1')).toMatchObject({ on_hand: 4, inventory_seq: seq });
  }, 60_000);

  it('is refused once the stream has passed its seq and took its own event of it (a copy, or another numbered the same): it would overwrite the stream\'s', async () => {
    const FAR = 150; // the stream is at 106 when it is given up
    const i = start();
    let seq = await letterOf(i, FAR);
    expect(seq).toBeLessThan(FAR);
    expect(await i.replayDeadLetters()).toMatchObject({ replayed: 0, failed: 1 });
    // The stream reaches and passes it: its own seq 150 (another event of A-1) is applied in its turn.
    while (seq < FAR + 5) await i.accept(TOPIC, inv(++seq, seq === FAR ? 'A-1' : `I-${seq}`, seq === FAR ? 9 : seq));
    i.commitAll();
    expect(stockRow('A-1')).toMatchObject({ on_hand: 9, inventory_seq: FAR });
    // Replayed, the letter's image (7, the same seq) overwrote the stream's own.
    expect(await i.replayDeadLetters()).toMatchObject({ replayed: 0, failed: 1 });
    expect(i.listDeadLetters()[0]!.detail).toMatch(/^not replayed: inventory\/stock has passed seq 150 and took its own event of that seq .*dismiss it\. Before: seq 150 of inventory\/stock was held/);
    expect(stockRow('A-1')).toMatchObject({ on_hand: 9, inventory_seq: FAR });
  }, 60_000);

  it('goes through once the stream has skipped its seq (never applied; the sequence field orders it, as a late event)', async () => {
    const FAR = 150;
    const i = start();
    let seq = await letterOf(i, FAR);
    // The stream reaches 149 and goes on at 151: its 150 never comes, and the gap is skipped after 5 min.
    while (seq < FAR - 1) await i.accept(TOPIC, inv(++seq, `I-${seq}`, seq));
    seq++;
    for (let t = 0; t < 6 * 6; t++) {
      await i.accept(TOPIC, inv(++seq, `I-${seq}`, seq));
      env.now += 10_000;
      i.tick();
    }
    i.commitAll();
    expect(stockRow('A-1')).toBeUndefined();
    expect(await i.replayDeadLetters()).toMatchObject({ replayed: 1, failed: 0 });
    expect(i.listDeadLetters()[0]).toMatchObject({ status: 'replayed', reason: 'seq_far_ahead', seq: FAR });
    expect(stockRow('A-1')).toMatchObject({ on_hand: 7, inventory_seq: FAR });
  }, 60_000);
});

describe('an existing site: dead_letters made before seq_far_ahead was a reason', () => {
  it("opens as it is (the reason column's description, which lists the reasons, is left, no schema change) and takes and lists the new letter", async () => {
    const catalog = new Catalog(join(env.dir, 'warehouse'));
    const old = 'one of bad_json, unsafe_json, bad_envelope, topic_mismatch, no_contract, contract_violation, no_binding, binding_error, unfit_for_table, late_after_gap';
    catalog.createDatabase(DB);
    catalog.createTable(
      { database: DB, table: DEAD_LETTERS_TABLE.name },
      {
        fields: DEAD_LETTERS_TABLE.fields.map((f) => ({ name: f.name, type: f.type, ...(f.name === 'reason' ? { description: old } : f.description === undefined ? {} : { description: f.description }) })),
        primaryKeys: [...DEAD_LETTERS_TABLE.primaryKeys],
        partitionKeys: [],
        options: { ...DEAD_LETTERS_TABLE.options },
      },
    );
    const i = start(catalog);
    await letterOf(i, 1_000_000);
    const t = new Catalog(join(env.dir, 'warehouse')).getTable({ database: DB, table: DEAD_LETTERS_TABLE.name });
    expect(t.schema.id).toBe(0);
    expect(t.schema.fields.find((f) => f.name === 'reason')!.description).toBe(old);
    expect(i.listDeadLetters({ reason: 'seq_far_ahead' })).toHaveLength(1);
  }, 60_000);
});

describe('the PC\'s wall clock steps', () => {
  it('a step forward of an hour does not make a held event a letter: its 15 minutes count on the monotonic clock', async () => {
    let mono = 0;
    const i = start(undefined, () => mono);
    let seq = 0;
    for (; seq < 10; ) await i.accept(TOPIC, inv(++seq, `I-${seq}`, seq));
    await i.accept(TOPIC, inv(1_000_000, 'A-1', 7));
    const step = async (ms: number, wallStep = 0) => {
      await i.accept(TOPIC, inv(++seq, `I-${seq}`, seq));
      mono += ms;
      env.now += ms + wallStep;
      i.tick();
    };
    for (let t = 0; t < 6; t++) await step(10_000);
    await step(10_000, 3_600_000); // NTP sets the clock an hour on
    for (let t = 0; t < 6; t++) await step(10_000);
    i.commitAll();
    expect(i.listDeadLetters()).toEqual([]);
    expect(i.health().heldEvents).toBe(1);
    for (let t = 0; t < 14 * 6; t++) await step(10_000);
    i.commitAll();
    expect(i.listDeadLetters().map((d) => [d.reason, d.seq])).toEqual([['seq_far_ahead', 1_000_000]]);
  }, 60_000);
});
