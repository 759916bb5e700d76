// A late event of a range a gap skip gave up on is a dead letter `late_after_gap` (CONTRACTS.md §4,
// "A late event after a skipped gap"; DESIGN.md, "Failure cases"), not a silent duplicate.
import { describe, expect, it } from 'vitest';
import type { Ingestor } from './ingestor.ts';
import { seededIngestor, SITE, stockEvent } from './test-support/seeded-ingestor.ts';
import { withStockCounts } from './test-support/stock-counts.ts';

const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
const TOPIC = `tilstand/${SITE}/events/inventory/stock`;
const gapSkipAfter10s = { sequencer: { reorder_window_ms: 1_000, resync_retry_ms: 1_000, gap_give_up_ms: 10_000 } };

const env = seededIngestor({ tmpPrefix: 'tilstand-late-', t0: T0, defaults: gapSkipAfter10s });
const start = env.start;
const stockRow = env.stockRow;
const inv = (seq: number, item: string, qty: number) => stockEvent(seq, item, qty, T0);

/** seq 1 applied, seq 2 lost, seq 3 held and released by the skip at T0 + 10 s. */
async function skipSeq2(i: Ingestor): Promise<void> {
  await i.accept(TOPIC, inv(1, 'A-1', 1));
  await i.accept(TOPIC, inv(3, 'A-1', 3));
  env.now += 10_000;
  i.tick();
  i.commitAll();
  expect(stockRow('A-1')).toMatchObject({ on_hand: 3, inventory_seq: 3 });
}

describe('Ingestor: a late event after a skipped gap', () => {
  it('is a dead letter late_after_gap naming the gap and when it was skipped; an ordinary duplicate stays a silent drop', async () => {
    const i = start();
    await skipSeq2(i);
    const late = await i.accept(TOPIC, inv(2, 'B-1', 2)); // the module's resend, after the skip
    await i.accept(TOPIC, inv(3, 'A-1', 3)); // an ordinary duplicate
    await i.accept(TOPIC, inv(2, 'B-1', 2)); // the late one again: its letter is made already
    i.commitAll();
    const letters = i.listDeadLetters();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ position: late, status: 'open', reason: 'late_after_gap', seq: 2, path: 'source.seq', module: 'inventory', stream: 'stock' });
    expect(letters[0]!.detail).toContain('seq 2..2');
    expect(letters[0]!.detail).toContain(new Date(T0 + 10_000).toISOString());
    expect(stockRow('B-1')).toBeUndefined(); // not applied behind the position
    // The letter moved nothing: the next event goes on.
    await i.accept(TOPIC, inv(4, 'A-1', 4));
    i.commitAll();
    expect(stockRow('A-1')).toMatchObject({ on_hand: 4, inventory_seq: 4 });
    expect(i.metrics()).toMatch(/tilstand_ingest_events_duplicate_total\{site="s1"\} 2/);
  });

  it('survives a restart (dead_letters keeps the skipped ranges), and a crash after the letter makes no second one', async () => {
    const i = start();
    await skipSeq2(i);
    i.close();
    env.open.splice(env.open.indexOf(i), 1);
    const j = start();
    const late = await j.accept(TOPIC, inv(2, 'B-1', 2));
    j.commitAll();
    expect(j.listDeadLetters().map((d) => [d.position, d.reason])).toEqual([[late, 'late_after_gap']]);
    j.abandon(); // kill -9 after the commit
    env.open.splice(env.open.indexOf(j), 1);
    const k = start();
    await k.accept(TOPIC, inv(2, 'B-1', 2)); // once more: its letter is made already
    k.commitAll();
    expect(k.listDeadLetters().map((d) => [d.position, d.reason])).toEqual([[late, 'late_after_gap']]);
  });

  it('a crash before the letter was committed writes it at the journal read', async () => {
    const i = start();
    await skipSeq2(i);
    const late = await i.accept(TOPIC, inv(2, 'B-1', 2));
    i.abandon();
    env.open.splice(env.open.indexOf(i), 1);
    const j = start();
    j.commitAll();
    expect(j.listDeadLetters().map((d) => [d.position, d.reason, d.status])).toEqual([[late, 'late_after_gap', 'open']]);
  });

  it('a crash after the data table committed past the skip, before the next progress commit of dead_letters, still makes the letter', async () => {
    const i = start();
    await i.accept(TOPIC, inv(1, 'A-1', 1));
    i.tick(); // a new site's dead_letters commits its progress at once (hwm 1)
    i.commitAll();
    await i.accept(TOPIC, inv(3, 'A-1', 3));
    env.now += 10_000;
    i.tick(); // the skip of seq 2: stock takes seq 3; dead_letters' idle commit is minutes away
    i.commitAll(); // stock commits hwm 3
    expect(stockRow('A-1')).toMatchObject({ on_hand: 3, inventory_seq: 3 });
    i.abandon(); // kill -9
    env.open.splice(env.open.indexOf(i), 1);
    const j = start();
    const late = await j.accept(TOPIC, inv(2, 'B-1', 2)); // the module's resend after the restart
    j.commitAll();
    expect(j.listDeadLetters().map((d) => [d.position, d.reason, d.seq])).toEqual([[late, 'late_after_gap', 2]]);
  });

  it('a crash after one table of the stream committed past the skip and before another did still makes the letter', async () => {
    // A second table of the stream (the site's own), slower to commit than stock.
    const two = withStockCounts([
      { table: 'stock', budgetMs: 2_000, decision: 'test', confirmedBy: 'test' },
      { table: 'stock_counts', budgetMs: 3_600_000, decision: 'test', confirmedBy: 'test' },
    ]);
    const i = start(two);
    await i.accept(TOPIC, inv(1, 'A-1', 1));
    i.tick();
    i.commitAll();
    await i.accept(TOPIC, inv(3, 'A-1', 3));
    env.now += 10_000;
    i.tick(); // the skip of seq 2
    env.now += 2_000;
    i.tick(); // stock is due, stock_counts is not
    expect(stockRow('A-1')).toMatchObject({ on_hand: 3, inventory_seq: 3 });
    i.abandon(); // kill -9
    env.open.splice(env.open.indexOf(i), 1);
    const j = start(two);
    const late = await j.accept(TOPIC, inv(2, 'B-1', 2));
    j.commitAll();
    expect(j.listDeadLetters().map((d) => [d.position, d.reason, d.seq])).toEqual([[late, 'late_after_gap', 2]]);
  });

  it('a replay writes it where no newer event of the stream changed the row (the table orders by seq)', async () => {
    const i = start();
    await skipSeq2(i);
    await i.accept(TOPIC, inv(2, 'B-1', 2)); // a key only seq 2 changed
    await i.accept(TOPIC, inv(2, 'A-1', 2)); // (a second event of seq 2 is a duplicate; see below)
    i.commitAll();
    const [letter] = i.listDeadLetters();
    expect(await i.replayDeadLetters([letter!.position])).toMatchObject({ replayed: 1, failed: 0 });
    expect(stockRow('B-1')).toMatchObject({ on_hand: 2, inventory_seq: 2 });
    expect(stockRow('A-1')).toMatchObject({ on_hand: 3, inventory_seq: 3 });
    expect(i.listDeadLetters()[0]).toMatchObject({ status: 'replayed' });
  });

  it('a late A-1 image older than the row is replayed without winning', async () => {
    const i = start();
    await skipSeq2(i);
    await i.accept(TOPIC, inv(2, 'A-1', 2));
    i.commitAll();
    const [letter] = i.listDeadLetters();
    expect(letter).toMatchObject({ reason: 'late_after_gap' });
    expect(await i.replayDeadLetters([letter!.position])).toMatchObject({ replayed: 1, failed: 0 });
    expect(stockRow('A-1')).toMatchObject({ on_hand: 3, inventory_seq: 3 });
  });
});

describe('skipped ranges in dead_letters snapshot properties', () => {
  it('read back what was written; a value that does not read is named, not thrown', async () => {
    const { readSkipped, skippedProperties } = await import('./progress.ts');
    const props = skippedProperties([{ module: 'm', stream: 's', ranges: [{ from: 2, to: 4, atMs: T0 }, { from: 9, to: 9, atMs: T0 + 1 }] }]);
    expect(props).toEqual({ 'tilstand.skipped.m/s': `2-4@${T0},9-9@${T0 + 1}` });
    expect(readSkipped(props).ranges.get('m/s')).toEqual([{ from: 2, to: 4, atMs: T0 }, { from: 9, to: 9, atMs: T0 + 1 }]);
    const bad = readSkipped({ 'tilstand.skipped.m/s': '4-2@1', 'tilstand.skipped.m/t': `1-1@9999999999999999`, 'tilstand.skipped.m/u': 'x' });
    expect(bad.ranges.size).toBe(0);
    expect(bad.bad).toHaveLength(3);
  });
});
