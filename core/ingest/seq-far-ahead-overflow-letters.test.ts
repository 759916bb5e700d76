// The far-ahead letters of an overflow (CONTRACTS.md §4, "An event far ahead of its stream",
// "Dropped from a full reorder buffer") across a restart, over a letter the event had before the
// start, and once the resend applies an event lettered so:
// - held across a restart (or a kill after the tables' commit), the far event is held again by the
//   journal's read at open, and the stream's events after it are at or below the restored position
//   (duplicates): they count as the stream going on in order (in the run that took them they came
//   in order), so the overflow that drops the far event letters it as before the restart;
// - a letter the event had before the start (`no_binding`: no binding then) is rewritten as
//   `seq_far_ahead` when the event is given up (overflow or tick), durably, so "replay all"
//   refuses it as a seq_far_ahead letter instead of writing the far image;
// - an overflow letter whose seq the stream's resend then applies with the same payload (an early
//   event marked far ahead) is closed as replayed, as a letter open at the start is; so is one
//   open at the start when the resend comes after a restart (the newest 1,024 of those whose seq
//   the stream has not passed, among the newest 2,048 open), and each letter of a seq closes on
//   its own condition (a far letter and one open at the start of the same seq, two far letters
//   of one event); a far letter closes at the read at open when a table holds the event already
//   (a kill between the tables' commit and dead_letters');
// - the warning says what became of the letter: made, rewritten, or left as it is (dismissed
//   before), or none made (the event was processed before the start).
import { describe, expect, it, vi } from 'vitest';
import { TableReader } from '../lsm/index.ts';
import { FAR_LETTERS_BY_SEQ_LOOKS, FAR_LETTERS_BY_SEQ_MAX, type Ingestor } from './ingestor.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_TABLES } from './seed-tables.ts';
import { moduleEvent, seededIngestor, SITE, stockEvent, topic } from './test-support/seeded-ingestor.ts';
import { withStockCounts } from './test-support/stock-counts.ts';

const T0 = Date.UTC(2026, 11, 7, 8, 0, 0);
const TOPIC = `tilstand/${SITE}/events/inventory/stock`;
const FAR = 1_000_000;
const BUFFER = 8;

const env = seededIngestor({ tmpPrefix: 'tilstand-far-ahead-letters-', t0: T0, defaults: { sequencer: { reorder_buffer_max: BUFFER } } });
const inv = (seq: number, qty: number, item = `I-${seq}`) => stockEvent(seq, item, qty, env.now);
/** The seed site without stock and its binding: inventory/stock's events are no_binding letters. */
const noStock = { tables: SEED_TABLES.filter((t) => t.name !== 'stock'), bindings: SEED_BINDINGS.filter((b) => b.table !== 'stock') };

function restart(i: Ingestor, how: 'close' | 'kill', extra: Parameters<typeof env.start>[0] = {}): Ingestor {
  if (how === 'close') i.close();
  else i.abandon();
  env.open.splice(env.open.indexOf(i), 1);
  return env.start(extra);
}

/**
 * The stream goes on in order from seq 11, one event a simulated 10 s with a tick after each, for
 * 16 minutes: past far_ahead_give_up_ms (15 min), so tick gives up what is held far ahead; then
 * every table commits, nothing held. Returns the last seq sent.
 */
async function pastFarGiveUp(j: Ingestor): Promise<number> {
  let seq = 10;
  for (let t = 0; t < 16 * 6; t++) {
    await j.accept(TOPIC, inv(++seq, seq, 'SAME'));
    env.now += 10_000;
    j.tick();
  }
  j.commitAll();
  expect(j.health().heldEvents).toBe(0);
  return seq;
}

const farLetters = (i: Ingestor) => i.listDeadLetters({ reason: 'seq_far_ahead' }).map((d) => [d.position, d.seq, d.status]);
const overflowDrops = (i: Ingestor) => Number(/\ntilstand_ingest_reorder_overflow_drops_total\{site="s1"\} (\d+)\n/.exec(i.metrics())![1]);

describe('far-ahead overflow letters: held across a restart', () => {
  it('a far event held at a graceful restart is lettered when a later overflow drops it', async () => {
    const i = env.start();
    for (let seq = 1; seq <= 10; seq++) await i.accept(TOPIC, inv(seq, seq));
    const far = await i.accept(TOPIC, inv(FAR, 7, 'FAR-1'));
    for (let seq = 11; seq <= 20; seq++) await i.accept(TOPIC, inv(seq, seq)); // the stream goes on below it
    for (const seq of [22, 23, 24, 25, 26, 27]) await i.accept(TOPIC, inv(seq, seq)); // 21 lost: 7 held
    i.commitAll(); // hwm 20, the position before the far event
    const j = restart(i, 'close');
    // The read holds the far event again; 11..20 are at or below the restored position.
    expect(j.health().heldEvents).toBe(7);
    await j.accept(TOPIC, inv(28, 28)); // full
    await j.accept(TOPIC, inv(29, 29)); // overflow: the highest held is the far event
    expect(farLetters(j)).toEqual([[far, FAR, 'open']]);
    for (let seq = 21; seq <= 29; seq++) await j.accept(TOPIC, inv(seq, seq)); // the module's resend
    j.commitAll();
    env.now += 6 * 60_000; // the idle tables' progress commits
    j.tick();
    expect(j.health().heldEvents).toBe(0);
    for (let seq = 1; seq <= 29; seq++) expect(env.stockRow(`I-${seq}`)).toMatchObject({ on_hand: seq, inventory_seq: seq });
    expect(env.stockRow('FAR-1')).toBeUndefined();
    expect(farLetters(j)).toEqual([[far, FAR, 'open']]);
    expect(overflowDrops(j)).toBe(1);
    expect(env.journal.getCheckpoint('ingest')).toBeGreaterThan(far);
  });

  it('a letter made after the tables committed the stream past the far event, then a kill: the read makes it again', async () => {
    const i = env.start();
    for (let seq = 1; seq <= 10; seq++) await i.accept(TOPIC, inv(seq, seq));
    const far = await i.accept(TOPIC, inv(FAR, 7, 'FAR-1'));
    for (let seq = 11; seq <= 20; seq++) {
      env.now += 1_000;
      await i.accept(TOPIC, inv(seq, seq));
    }
    // An event no binding takes, so dead_letters commits the stream's position too.
    await i.accept(`tilstand/${SITE}/events/nobody/nothing`, stockEvent(1, 'X', 1, env.now));
    i.commitAll();
    expect(i.health().frontier).toBe(far - 1n);
    for (const seq of [22, 23, 24, 25, 26, 27, 28, 35]) await i.accept(TOPIC, inv(seq, seq)); // 35 overflows
    expect(farLetters(i)).toEqual([[far, FAR, 'open']]); // not committed
    const j = restart(i, 'kill');
    // The read at open: the far event held, 11..20 at or below the restored position, 22..28, 35: the same overflow.
    expect(farLetters(j)).toEqual([[far, FAR, 'open']]);
    for (let seq = 21; seq <= 35; seq++) await j.accept(TOPIC, inv(seq, seq));
    j.commitAll();
    j.tick();
    expect(j.health().heldEvents).toBe(0);
    for (let seq = 1; seq <= 35; seq++) expect(env.stockRow(`I-${seq}`)).toMatchObject({ on_hand: seq, inventory_seq: seq });
    expect(farLetters(j)).toEqual([[far, FAR, 'open']]);
    expect(j.deadLetterCount()).toBe(2); // and nobody/nothing's no_binding
  });
});

describe('far-ahead overflow letters: a letter the event had before the start', () => {
  /** 1..3, FAR (the same row as 3), 4, 5 in order, then 7..10 (6 lost), all while stock had no binding. */
  async function beforeBinding(): Promise<Record<number, bigint>> {
    const i = env.start(noStock);
    const pos: Record<number, bigint> = {};
    for (const q of [1, 2, 3]) pos[q] = await i.accept(TOPIC, inv(q, q, 'SAME'));
    pos[FAR] = await i.accept(TOPIC, inv(FAR, FAR, 'SAME'));
    for (const q of [4, 5, 7, 8, 9, 10]) pos[q] = await i.accept(TOPIC, inv(q, q, 'SAME'));
    i.commitAll();
    expect(i.listDeadLetters().map((d) => d.reason)).toEqual(Array(10).fill('no_binding'));
    i.close();
    env.open.splice(env.open.indexOf(i), 1);
    return pos;
  }

  it('given up by an overflow in the read at open: rewritten seq_far_ahead, durably; "replay all" refuses it', async () => {
    const pos = await beforeBinding();
    let j = env.start({ sequencer: { reorder_buffer_max: 4 } }); // the binding now: the read overflows at 10
    const letter = () => j.listDeadLetters().find((d) => d.position === pos[FAR])!;
    expect(letter()).toMatchObject({ reason: 'seq_far_ahead', status: 'open', seq: FAR, path: 'source.seq' });
    expect(letter().detail).toMatch(/^seq 1000000 of inventory\/stock was dropped from a full reorder buffer/);
    // Durable: dead_letters' commit at open holds it, a kill after it keeps it.
    j = restart(j, 'kill', { sequencer: { reorder_buffer_max: 4 } });
    expect(letter()).toMatchObject({ reason: 'seq_far_ahead', status: 'open' });
    for (let q = 6; q <= 10; q++) await j.accept(TOPIC, inv(q, q, 'SAME')); // the resend
    j.commitAll();
    expect(env.stockRow('SAME')).toMatchObject({ inventory_seq: 10 });
    // Every other letter's event is in stock: closed as replayed at open or by the resend.
    expect(j.listDeadLetters({ status: 'open' }).map((d) => d.position)).toEqual([pos[FAR]]);
    expect(await j.replayDeadLetters()).toMatchObject({ replayed: 0, failed: 1 });
    expect(env.stockRow('SAME')).toMatchObject({ inventory_seq: 10, on_hand: 10 }); // not the far image
    expect(letter()).toMatchObject({ reason: 'seq_far_ahead', status: 'open' });
    expect(letter().detail).toMatch(/^not replayed: inventory\/stock is at seq 10, below 1000000/);
    expect(j.deadLetterCount()).toBe(1);
  });

  it("given up by tick's far_ahead after the read held it: rewritten seq_far_ahead; \"replay all\" refuses it", async () => {
    const pos = await beforeBinding();
    const j = env.start(); // the binding now: the read holds FAR and 7..10 (6 lost)
    expect(j.health().heldEvents).toBe(5);
    await j.accept(TOPIC, inv(6, 6, 'SAME')); // the stream goes on in order: 7..10 released
    const seq = await pastFarGiveUp(j);
    const letter = () => j.listDeadLetters().find((d) => d.position === pos[FAR])!;
    expect(letter()).toMatchObject({ reason: 'seq_far_ahead', status: 'open', seq: FAR });
    expect(letter().detail).toMatch(/^seq 1000000 of inventory\/stock was held 15 min \(far_ahead_give_up_ms\)/);
    expect(j.deadLetterCount()).toBe(1);
    expect(await j.replayDeadLetters()).toMatchObject({ replayed: 0, failed: 1 });
    expect(env.stockRow('SAME')).toMatchObject({ inventory_seq: seq });
  }, 60_000);

  it('an early event the read drops as far ahead: its letter (no_binding then) is closed when the resend applies it', async () => {
    const order = [1, 2, 10, 3, 5, 6, 7, 8]; // 10 early (3..9 to come), 3 in order, 4 lost, 8 overflows
    const i = env.start({ ...noStock, sequencer: { reorder_buffer_max: 4 } });
    for (const q of order) await i.accept(TOPIC, inv(q, q));
    i.commitAll();
    expect(i.deadLetterCount()).toBe(order.length);
    const j = restart(i, 'close', { sequencer: { reorder_buffer_max: 4 } });
    for (const q of [4, 5, 6, 7, 8, 9, 10]) await j.accept(TOPIC, inv(q, q));
    j.commitAll();
    for (let q = 1; q <= 10; q++) expect(env.stockRow(`I-${q}`)).toMatchObject({ on_hand: q, inventory_seq: q });
    expect(j.listDeadLetters({ status: 'open' })).toEqual([]);
    expect(j.deadLetterCount()).toBe(0);
  });
});

/** 1, 2, 10 (early: 3..9 to come), 3 (in order: 4 lost), 5, 6, 7 (full), 8: the overflow drops 10, marked (buffer 4). */
async function strayLetter(i: Ingestor): Promise<bigint> {
  const pos: Record<number, bigint> = {};
  for (const q of [1, 2, 10, 3, 5, 6, 7, 8]) pos[q] = await i.accept(TOPIC, inv(q, q));
  expect(i.listDeadLetters({ reason: 'seq_far_ahead' }).map((d) => [d.position, d.reason, d.seq, d.status])).toEqual([[pos[10], 'seq_far_ahead', 10, 'open']]);
  return pos[10]!;
}

describe('far-ahead overflow letters: an early event marked far ahead', () => {
  it('its letter is closed as replayed when the resend applies the same event in its turn', async () => {
    const i = env.start({ sequencer: { reorder_buffer_max: 4 } });
    const ten = await strayLetter(i);
    for (const q of [4, 5, 6, 7, 8, 9, 10]) await i.accept(TOPIC, inv(q, q));
    i.commitAll();
    for (let q = 1; q <= 10; q++) expect(env.stockRow(`I-${q}`)).toMatchObject({ on_hand: q, inventory_seq: q });
    expect(i.listDeadLetters().map((d) => [d.position, d.status])).toEqual([[ten, 'replayed']]);
    expect(i.deadLetterCount()).toBe(0);
    expect(i.metrics()).toMatch(/\ntilstand_ingest_dead_letters_open\{site="s1"\} 0\n/);
  });

  it('not when the event applied at that seq is another (its payload differs): the letter stays open', async () => {
    const i = env.start({ sequencer: { reorder_buffer_max: 4 } });
    const ten = await strayLetter(i);
    for (const q of [4, 5, 6, 7, 8, 9]) await i.accept(TOPIC, inv(q, q));
    await i.accept(TOPIC, inv(10, 99)); // seq 10 again, another image
    i.commitAll();
    expect(env.stockRow('I-10')).toMatchObject({ on_hand: 99, inventory_seq: 10 });
    expect(i.listDeadLetters().map((d) => [d.position, d.status])).toEqual([[ten, 'open']]);
    expect(i.deadLetterCount()).toBe(1);
  });
});

describe('far-ahead overflow letters: remembered by seq within a bound', () => {
  const reservation = (seq: number) => moduleEvent('commerce', 'reservations', seq, { item: `R-${seq}`, location: 'L1', reserved_qty: seq }, 'commerce.reservations', env.now);

  /**
   * inventory/stock: 1, 5 (early), 2 (in order), 4 (overflows: 5 dropped, marked); then `n` true
   * far letters of commerce/reservations (each: a far seq, the next in order, an early one that
   * overflows, the one before it); then stock's resend 3, 5. Returns stock 5's letter.
   */
  async function strayThenFar(n: number): Promise<{ i: Ingestor; five: bigint }> {
    const i = env.start({ sequencer: { reorder_buffer_max: 1 } });
    const stock: Record<number, bigint> = {};
    for (const q of [1, 5, 2, 4]) stock[q] = await i.accept(TOPIC, inv(q, q));
    const accepted: Promise<bigint>[] = [];
    for (let k = 0, at = 0; k < n; k++, at += 3) {
      for (const seq of [FAR + k, at + 1, at + 3, at + 2]) accepted.push(i.accept(topic('commerce', 'reservations'), reservation(seq)));
    }
    await Promise.all(accepted);
    expect(i.listDeadLetters({ reason: 'seq_far_ahead', limit: n + 1 }).length).toBe(n + 1);
    for (const q of [3, 5]) await i.accept(TOPIC, inv(q, q));
    i.commitAll();
    expect(env.stockRow('I-5')).toMatchObject({ on_hand: 5, inventory_seq: 5 });
    return { i, five: stock[5]! };
  }

  it(`the newest ${FAR_LETTERS_BY_SEQ_MAX} in all: with that many since, the letter is still closed`, async () => {
    const { i, five } = await strayThenFar(FAR_LETTERS_BY_SEQ_MAX - 1);
    expect(i.listDeadLetters({ reason: 'seq_far_ahead', limit: 1 }).map((d) => [d.position, d.status])).toEqual([[five, 'replayed']]);
  }, 120_000);

  it('one more and the oldest is forgotten: its event applied after, its letter stays open (a copy to dismiss)', async () => {
    const { i, five } = await strayThenFar(FAR_LETTERS_BY_SEQ_MAX);
    expect(i.listDeadLetters({ reason: 'seq_far_ahead', limit: 1 }).map((d) => [d.position, d.status])).toEqual([[five, 'open']]);
  }, 120_000);
});

describe('far-ahead overflow letters: open at the start', () => {
  // A seq_far_ahead letter open when the site starts is remembered by seq as one of the run's own
  // (the newest FAR_LETTERS_BY_SEQ_MAX, of the seqs its stream has not passed): the release of that
  // seq with the same payload closes it, another payload leaves it open. Before, a restart between
  // the letter and the resend left the letter open, a copy to dismiss.
  const buffer4 = { sequencer: { reorder_buffer_max: 4 } };
  const res = (seq: number, qty = seq) => moduleEvent('commerce', 'reservations', seq, { item: `R-${seq}`, location: 'L1', reserved_qty: qty }, 'commerce.reservations', env.now);
  const status = (i: Ingestor, p: bigint) => i.listDeadLetters({ reason: 'seq_far_ahead' }).find((d) => d.position === p)?.status;

  it('a restart between the letter and the resend: the resend of the same event closes it as replayed', async () => {
    const i = env.start(buffer4);
    const ten = await strayLetter(i);
    i.commitAll();
    const j = restart(i, 'close', buffer4);
    expect(status(j, ten)).toBe('open');
    for (const q of [4, 5, 6, 7, 8, 9, 10]) await j.accept(TOPIC, inv(q, q));
    j.commitAll();
    for (let q = 1; q <= 10; q++) expect(env.stockRow(`I-${q}`)).toMatchObject({ on_hand: q, inventory_seq: q });
    expect(status(j, ten)).toBe('replayed');
    expect(j.deadLetterCount()).toBe(0);
  });

  it('after the journal read\'s start (another stream held the tables\' position before it), then a kill: the read passes over it, the resend closes it', async () => {
    const i = env.start(buffer4);
    await i.accept(topic('commerce', 'reservations'), res(2)); // 1 lost: held, the tables' position stays before it
    const ten = await strayLetter(i);
    i.commitAll();
    expect(i.health().frontier).toBeLessThan(ten);
    const j = restart(i, 'kill', buffer4);
    expect(j.health().lettersClosedAtOpen).toBe(0);
    expect(status(j, ten)).toBe('open');
    for (const q of [4, 5, 6, 7, 8, 9, 10]) await j.accept(TOPIC, inv(q, q));
    j.commitAll();
    expect(env.stockRow('I-10')).toMatchObject({ on_hand: 10, inventory_seq: 10 });
    expect(status(j, ten)).toBe('replayed');
    expect(j.deadLetterCount()).toBe(0);
  });

  it('the resend journaled before a kill that lost the letter\'s close: the journal\'s read at open closes it', async () => {
    const i = env.start(buffer4);
    const ten = await strayLetter(i);
    i.commitAll(); // the letter open on disk
    for (const q of [4, 5, 6, 7, 8, 9, 10]) await i.accept(TOPIC, inv(q, q)); // closed in memory, not committed
    const j = restart(i, 'kill', buffer4);
    expect(j.health().lettersClosedAtOpen).toBe(1);
    expect(status(j, ten)).toBe('replayed');
    expect(env.stockRow('I-10')).toMatchObject({ on_hand: 10, inventory_seq: 10 });
    expect(j.deadLetterCount()).toBe(0);
  });

  it('not when the event applied at that seq after the restart is another (its payload differs): the letter stays open', async () => {
    const i = env.start(buffer4);
    const ten = await strayLetter(i);
    i.commitAll();
    const j = restart(i, 'close', buffer4);
    for (const q of [4, 5, 6, 7, 8, 9]) await j.accept(TOPIC, inv(q, q));
    await j.accept(TOPIC, inv(10, 99)); // seq 10 again, another image
    j.commitAll();
    expect(env.stockRow('I-10')).toMatchObject({ on_hand: 99, inventory_seq: 10 });
    expect(status(j, ten)).toBe('open');
    expect(j.deadLetterCount()).toBe(1);
  });

  /**
   * inventory/stock's stray letter (seq 5, buffer 1: 1, 5, 2, 4), then `n` more seq_far_ahead letters
   * of commerce/reservations, all open; a restart; then stock's resend 3, 5. `passed`: each
   * reservations letter is of an early event whose seq the stream then applied with another
   * payload (the stream passed it: its seq is never released again); else a true far one (seq
   * 1,000,000 + k, never reached). Returns the stock letter's status after the resend.
   */
  async function strayThenOpenAtStart(n: number, passed: boolean): Promise<string | undefined> {
    const one = { sequencer: { reorder_buffer_max: 1 } };
    const i = env.start(one);
    const stock: Record<number, bigint> = {};
    for (const q of [1, 5, 2, 4]) stock[q] = await i.accept(TOPIC, inv(q, q));
    const accepted: Promise<bigint>[] = [];
    const send = (seq: number, qty = seq) => accepted.push(i.accept(topic('commerce', 'reservations'), res(seq, qty)));
    for (let k = 0, at = 0; k < n; k++) {
      if (passed) {
        // at+4 early, at+1 in order below it, at+3 overflows (at+4 dropped, marked), at+2, at+4 another image.
        for (const seq of [at + 4, at + 1, at + 3, at + 2]) send(seq);
        send(at + 4, -(at + 4));
        at += 4;
      } else {
        for (const seq of [FAR + k, at + 1, at + 3, at + 2]) send(seq);
        at += 3;
      }
    }
    await Promise.all(accepted);
    i.commitAll();
    expect(i.listDeadLetters({ reason: 'seq_far_ahead', status: 'open', limit: n + 1 }).length).toBe(n + 1);
    const j = restart(i, 'close', one);
    for (const q of [3, 5]) await j.accept(TOPIC, inv(q, q));
    j.commitAll();
    expect(env.stockRow('I-5')).toMatchObject({ on_hand: 5, inventory_seq: 5 });
    return status(j, stock[5]!);
  }

  it(`the newest ${FAR_LETTERS_BY_SEQ_MAX} open at the start: with that many, the oldest is still closed`, async () => {
    expect(await strayThenOpenAtStart(FAR_LETTERS_BY_SEQ_MAX - 1, false)).toBe('replayed');
  }, 120_000);

  it('one more and the oldest is not remembered: it stays open (a copy to dismiss)', async () => {
    expect(await strayThenOpenAtStart(FAR_LETTERS_BY_SEQ_MAX, false)).toBe('open');
  }, 120_000);

  it('letters whose seq the stream has passed take no place among them: the older letter is still closed', async () => {
    expect(await strayThenOpenAtStart(FAR_LETTERS_BY_SEQ_MAX, true)).toBe('replayed');
  }, 120_000);

  it(`a start looks at the newest ${FAR_LETTERS_BY_SEQ_LOOKS} open far letters: with one fewer passed ones after it, the oldest is looked at and closed`, async () => {
    expect(await strayThenOpenAtStart(FAR_LETTERS_BY_SEQ_LOOKS - 1, true)).toBe('replayed');
  }, 120_000);

  it('one more passed letter and the oldest is not looked at: it stays open (a copy to dismiss), though none was kept', async () => {
    expect(await strayThenOpenAtStart(FAR_LETTERS_BY_SEQ_LOOKS, true)).toBe('open');
  }, 120_000);
});

describe('far-ahead overflow letters: the warning says what became of the letter', () => {
  /** 1..3, FAR, 4, 5, 7..10 (6 lost) of inventory/stock while stock had no binding: no_binding letters. */
  async function beforeBinding(): Promise<bigint> {
    const i = env.start(noStock);
    let far = 0n;
    for (const q of [1, 2, 3, FAR, 4, 5, 7, 8, 9, 10]) {
      const p = await i.accept(TOPIC, inv(q, q, 'SAME'));
      if (q === FAR) far = p;
    }
    i.commitAll();
    i.close();
    env.open.splice(env.open.indexOf(i), 1);
    return far;
  }
  const warned = (warnings: string[]) => warnings.filter((w) => w.includes(`seq ${FAR} `));

  it('a letter made: "made a dead letter"', async () => {
    const warnings: string[] = [];
    const i = env.start({ sequencer: { reorder_buffer_max: 4 }, onWarning: (w) => warnings.push(w) });
    const ten = await strayLetter(i);
    expect(warnings.filter((w) => w.includes('seq 10 '))).toEqual([
      `ingest: inventory/stock seq 10 was dropped from a full reorder buffer while the stream went on in order below it (at seq 3); made a dead letter at journal position ${ten}`,
    ]);
  });

  it('an open letter from before the start rewritten: says so, naming its reason before', async () => {
    const far = await beforeBinding();
    const warnings: string[] = [];
    const j = env.start({ sequencer: { reorder_buffer_max: 4 }, onWarning: (w) => warnings.push(w) }); // the read overflows at 10
    expect(j.listDeadLetters().find((d) => d.position === far)).toMatchObject({ reason: 'seq_far_ahead', status: 'open' });
    expect(warned(warnings)).toEqual([
      `ingest: inventory/stock seq ${FAR} was dropped from a full reorder buffer while the stream went on in order below it (at seq 5); its open no_binding letter at journal position ${far} is now this seq_far_ahead letter`,
    ]);
  });

  it('a letter dismissed before the start: left as it is, and the warning says so', async () => {
    const far = await beforeBinding();
    const i = env.start(noStock);
    expect(i.dismissDeadLetters([far], 'ops', 'a test event')).toMatchObject({ dismissed: 1 });
    i.close();
    env.open.splice(env.open.indexOf(i), 1);
    const warnings: string[] = [];
    const j = env.start({ sequencer: { reorder_buffer_max: 4 }, onWarning: (w) => warnings.push(w) });
    expect(j.listDeadLetters().find((d) => d.position === far)).toMatchObject({ reason: 'no_binding', status: 'dismissed' });
    expect(warned(warnings)).toEqual([
      `ingest: inventory/stock seq ${FAR} was dropped from a full reorder buffer while the stream went on in order below it (at seq 5); its dismissed no_binding letter at journal position ${far} is left as it is`,
    ]);
  });

  it('an event processed before the start, without a letter (a table made at this start reads it again): says no letter was made', async () => {
    // A second table of inventory/stock, made at the next start: the journal's read goes through
    // the stream from seq 1 for it, and drops seq 5 from a buffer of 1 as far ahead (2 came in
    // order after it). dead_letters' position is past the event, which stock took before: no letter.
    const i = env.start();
    const pos: Record<number, bigint> = {};
    for (const q of [1, 5, 2, 4, 3]) pos[q] = await i.accept(TOPIC, inv(q, q));
    i.commitAll();
    expect(env.stockRow('I-5')).toMatchObject({ on_hand: 5 });
    i.close();
    env.open.splice(env.open.indexOf(i), 1);
    const warnings: string[] = [];
    const j = env.start({ ...withStockCounts(), sequencer: { reorder_buffer_max: 1 }, onWarning: (w) => warnings.push(w) });
    expect(warnings.filter((w) => w.includes('seq 5 '))).toEqual([
      `ingest: inventory/stock seq 5 was dropped from a full reorder buffer while the stream went on in order below it (at seq 2); no dead letter made: journal position ${pos[5]} was processed before this start and has no letter`,
    ]);
    expect(j.listDeadLetters()).toEqual([]);
  });

  it("a letter dismissed while the read's hold lasted: tick's give-up leaves it as it is, and the warning says so", async () => {
    const far = await beforeBinding();
    const warnings: string[] = [];
    const j = env.start({ onWarning: (w) => warnings.push(w) }); // the read holds FAR and 7..10 (6 lost)
    expect(j.health().heldEvents).toBe(5);
    expect(j.dismissDeadLetters([far], 'ops', 'a test event')).toMatchObject({ dismissed: 1 });
    await j.accept(TOPIC, inv(6, 6, 'SAME'));
    await pastFarGiveUp(j);
    expect(j.listDeadLetters().find((d) => d.position === far)).toMatchObject({ reason: 'no_binding', status: 'dismissed' });
    expect(warned(warnings)).toHaveLength(1);
    expect(warned(warnings)[0]).toMatch(new RegExp(`^ingest: inventory/stock seq ${FAR} waited 15 min while the stream went on in order below it \\(at seq \\d+\\); its dismissed no_binding letter at journal position ${far} is left as it is$`));
  }, 60_000);
});

describe('far-ahead overflow letters: more than one letter at a seq', () => {
  // LettersBySeq keeps every letter of a stream and seq: a release closes each one whose
  // condition holds (by the seq alone, or the same payload). Before, the newest took the place of
  // the older, which then never closed.
  const buffer4 = { sequencer: { reorder_buffer_max: 4 } };
  const status = (i: Ingestor, p: bigint) => i.listDeadLetters().find((d) => d.position === p)?.status;

  it('a letter open at the start dropped by the read (by the seq alone) and a far letter of its resend: both closed', async () => {
    const i = env.start({ ...noStock, ...buffer4 });
    const pos: Record<number, bigint> = {};
    for (const q of [1, 50, 3, 4, 5, 6]) pos[q] = await i.accept(TOPIC, inv(q, q));
    i.commitAll();
    const j = restart(i, 'close', buffer4);
    // The read at open: 1 applied, 50 3 4 5 held, 6 overflows: 50 dropped (2 is missing, so not
    // far), remembered by the seq alone.
    expect(j.health().heldEvents).toBe(4);
    await j.accept(TOPIC, inv(2, 2)); // 2..6 applied
    const resend = await j.accept(TOPIC, inv(50, 50)); // held
    await j.accept(TOPIC, inv(7, 7)); // in order below it
    for (const q of [9, 10, 11, 12]) await j.accept(TOPIC, inv(q, q)); // 12 overflows: 50 given up as far
    expect(j.listDeadLetters({ reason: 'seq_far_ahead' }).map((d) => [d.position, d.status])).toEqual([[resend, 'open']]);
    for (let q = 8; q <= 50; q++) if (q < 9 || q > 12) await j.accept(TOPIC, inv(q, q));
    j.commitAll();
    expect(env.stockRow('I-50')).toMatchObject({ on_hand: 50, inventory_seq: 50 });
    expect([status(j, pos[50]!), status(j, resend)]).toEqual(['replayed', 'replayed']);
    expect(j.deadLetterCount()).toBe(0);
  });

  it('two far letters of the same event (given up twice): the release of that event closes both', async () => {
    const i = env.start(buffer4);
    const a: Record<number, bigint> = {};
    // 1 2 50 (early) 3 (in order) 5 6 7 8: 50 dropped as far (4 lost): letter A.
    for (const q of [1, 2, 50, 3, 5, 6, 7, 8]) a[q] = await i.accept(TOPIC, inv(q, q));
    await i.accept(TOPIC, inv(4, 4)); // 4..8 applied
    const b = await i.accept(TOPIC, inv(50, 50)); // the same bytes again, held
    await i.accept(TOPIC, inv(9, 9));
    for (const q of [11, 12, 13, 14]) await i.accept(TOPIC, inv(q, q)); // 14 overflows: 50 given up again: letter B
    expect(i.listDeadLetters({ reason: 'seq_far_ahead' }).map((d) => [d.position, d.status])).toEqual([[a[50], 'open'], [b, 'open']]);
    for (let q = 10; q <= 50; q++) if (q < 11 || q > 14) await i.accept(TOPIC, inv(q, q));
    i.commitAll();
    expect(env.stockRow('I-50')).toMatchObject({ on_hand: 50, inventory_seq: 50 });
    expect([status(i, a[50]!), status(i, b)]).toEqual(['replayed', 'replayed']);
    expect(i.deadLetterCount()).toBe(0);
  });
});

describe('far-ahead overflow letters: a kill between the tables\' commit and dead_letters\'', () => {
  // stock commits at once when due, dead_letters (the close) not before the kill.
  const budgets = [
    { table: 'stock', budgetMs: 2_000, decision: 'test', confirmedBy: 'test' },
    { table: 'dead_letters', budgetMs: 24 * 3_600_000, decision: 'test', confirmedBy: 'test' },
  ];

  it('the resend applied and committed to stock, the close not committed: the read at open closes the far letter', async () => {
    const o = { sequencer: { reorder_buffer_max: 4 }, budgets };
    const i = env.start(o);
    const ten = await strayLetter(i);
    i.commitAll(); // the letter open on disk
    for (const q of [4, 5, 6, 7, 8, 9, 10]) await i.accept(TOPIC, inv(q, q)); // closed in memory
    env.now += 1_500;
    i.tick(); // stock due: committed; dead_letters not
    expect(env.stockRow('I-10')).toMatchObject({ on_hand: 10, inventory_seq: 10 });
    const j = restart(i, 'kill', o);
    expect(j.listDeadLetters().find((d) => d.position === ten)?.status).toBe('replayed');
    expect(j.health().lettersClosedAtOpen).toBe(1);
    expect(j.deadLetterCount()).toBe(0);
  });

  it('a far letter dismissed before the resend stays dismissed, in the run and at the read after a kill', async () => {
    const o = { sequencer: { reorder_buffer_max: 4 }, budgets };
    const i = env.start(o);
    const ten = await strayLetter(i);
    expect(i.dismissDeadLetters([ten], 'ops', 'a copy')).toMatchObject({ dismissed: 1 });
    i.commitAll();
    for (const q of [4, 5, 6, 7, 8, 9, 10]) await i.accept(TOPIC, inv(q, q));
    expect(i.listDeadLetters().find((d) => d.position === ten)?.status).toBe('dismissed');
    env.now += 1_500;
    i.tick();
    const j = restart(i, 'kill', o);
    expect(j.listDeadLetters().find((d) => d.position === ten)?.status).toBe('dismissed');
    expect(j.health().lettersClosedAtOpen).toBe(0);
  });
});

describe('far-ahead overflow letters open at the start: the cost of finding them', () => {
  it('one old far letter among many letters: the rows read at open are the heads\' pass and a few point reads, not a second pass', async () => {
    const LETTERS = 3_000;
    const i = env.start({ sequencer: { reorder_buffer_max: 4 } });
    const ten = await strayLetter(i); // the oldest letter, open
    await i.accept(TOPIC, inv(4, 4)); // 4..8 applied: nothing held, the read at open starts after the letters
    const accepted: Promise<bigint>[] = [];
    for (let n = 1; n <= LETTERS; n++) accepted.push(i.accept(`tilstand/${SITE}/events/nobody/nothing`, stockEvent(n, `X-${n}`, n, env.now)));
    await Promise.all(accepted);
    i.commitAll();
    const total = i.deadLetterCount();
    expect(total).toBe(LETTERS + 1);
    const j0 = restart(i, 'close', { sequencer: { reorder_buffer_max: 4 } });
    j0.close();
    env.open.splice(env.open.indexOf(j0), 1);
    // Every row dead_letters' readers hand out while the next Ingestor opens: scanned or got.
    let rows = 0;
    const ofDeadLetters = (r: TableReader) => (r as unknown as { table: { name: string } }).table.name.endsWith('.dead_letters');
    const scan = TableReader.prototype.scan;
    const get = TableReader.prototype.get;
    const scanSpy = vi.spyOn(TableReader.prototype, 'scan').mockImplementation(function* (this: TableReader, ...a: Parameters<TableReader['scan']>) {
      for (const row of scan.apply(this, a)) {
        if (ofDeadLetters(this)) rows++;
        yield row;
      }
    });
    const getSpy = vi.spyOn(TableReader.prototype, 'get').mockImplementation(function (this: TableReader, ...a: Parameters<TableReader['get']>) {
      if (ofDeadLetters(this)) rows++;
      return get.apply(this, a);
    });
    let j: Ingestor;
    try {
      j = env.start({ sequencer: { reorder_buffer_max: 4 } });
    } finally {
      scanSpy.mockRestore();
      getSpy.mockRestore();
    }
    // One pass over the letters' heads, and a bounded number of reads more (before: a second
    // pass from the oldest open far letter on, the whole table here).
    expect(rows).toBeGreaterThanOrEqual(total);
    expect(rows).toBeLessThanOrEqual(total + 16);
    // And the letter is remembered all the same: the resend closes it.
    for (const q of [9, 10]) await j.accept(TOPIC, inv(q, q));
    j.commitAll();
    expect(j.listDeadLetters({ reason: 'seq_far_ahead' }).map((d) => [d.position, d.status])).toEqual([[ten, 'replayed']]);
  }, 60_000);
});
