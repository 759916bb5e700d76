import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox, OutboxFullError } from './outbox.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-outbox-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('Outbox', () => {
  it('numbers each stream 1, 2, 3 … across reopenings, even after pruning', () => {
    const path = join(dir, 'o.db');
    let o = new Outbox(path, { events_acked_kept_max: 1 });
    for (let i = 0; i < 3; i++) o.markAcked('a', o.append('a', 0, (seq) => `a${seq}`).seq, 1);
    expect(o.append('b', 0, (seq) => `b${seq}`).seq).toBe(1);
    o.close();
    o = new Outbox(path, { events_acked_kept_max: 1 });
    expect(o.from('a', 0, 10).map((e) => e.seq)).toEqual([3]); // 1 and 2 pruned
    expect(o.append('a', 0, (seq) => `a${seq}`)).toEqual({ stream: 'a', seq: 4, payload: 'a4' });
    expect(o.unacked().map((e) => `${e.stream}${e.seq}`)).toEqual(['a4', 'b1']);
    o.close();
  });

  it('never prunes unacknowledged events, and refuses new ones beyond events_unacked_max', () => {
    const o = new Outbox(join(dir, 'o.db'), { events_acked_kept_max: 1, events_unacked_max: 3 });
    for (let i = 0; i < 3; i++) o.append('a', 0, (seq) => String(seq));
    o.markAcked('a', 3, 1); // prunes acked ≤ 2: none are acked
    expect(o.from('a', 1, 10).map((e) => e.seq)).toEqual([1, 2, 3]);
    o.append('a', 0, (seq) => String(seq));
    expect(() => o.append('a', 0, (seq) => String(seq))).toThrow(OutboxFullError);
    o.markAcked('a', 1, 1);
    o.markAcked('a', 1, 1); // idempotent
    expect(o.append('a', 0, (seq) => String(seq)).seq).toBe(5);
    o.close();
  });

  it('prunes an event acknowledged after the retention line passed it (a backlog acked late)', () => {
    const o = new Outbox(join(dir, 'o.db'), { events_acked_kept_max: 2 });
    for (let i = 0; i < 5; i++) o.append('a', 0, (seq) => String(seq));
    o.markAcked('a', 5, 1); // the line is at 3; 1..3 are not acknowledged yet, nothing goes
    expect(o.from('a', 0, 10).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    o.markAcked('a', 1, 1);
    o.markAcked('a', 3, 1);
    expect(o.from('a', 0, 10).map((e) => e.seq)).toEqual([2, 4, 5]);
    o.markAcked('a', 2, 1);
    o.markAcked('a', 4, 1);
    expect(o.from('a', 0, 10).map((e) => e.seq)).toEqual([4, 5]);
    o.close();
  });

  it('lists a stream\'s seqs from a point without payloads, and acknowledges a group in one transaction as one by one would', () => {
    const one = new Outbox(join(dir, 'one.db'), { events_acked_kept_max: 2 });
    const many = new Outbox(join(dir, 'many.db'), { events_acked_kept_max: 2 });
    for (const o of [one, many]) {
      for (let i = 0; i < 5; i++) o.append('a', 0, (seq) => `a${seq}`);
      for (let i = 0; i < 2; i++) o.append('b', 0, (seq) => `b${seq}`);
    }
    expect(one.seqsFrom('a', 2, 3)).toEqual([2, 3, 4]);
    expect(one.seqsFrom('c', 1, 10)).toEqual([]);
    const keys = [{ stream: 'a', seq: 5 }, { stream: 'a', seq: 1 }, { stream: 'b', seq: 1 }, { stream: 'a', seq: 3 }, { stream: 'a', seq: 3 }];
    for (const k of keys) one.markAcked(k.stream, k.seq, 1);
    many.markAckedMany(keys, 1);
    for (const o of [one, many]) {
      expect(o.from('a', 0, 10).map((e) => e.seq)).toEqual([2, 4, 5]); // 1 and 3 pruned once acknowledged
      expect(o.unackedKeys()).toEqual([{ stream: 'a', seq: 2 }, { stream: 'a', seq: 4 }, { stream: 'b', seq: 2 }]);
    }
    // The unacknowledged count moved by the three acknowledged once: two more fit under a bound of 5.
    one.close();
    many.close();
    const bounded = new Outbox(join(dir, 'many.db'), { events_acked_kept_max: 2, events_unacked_max: 5 });
    bounded.markAckedMany([{ stream: 'a', seq: 2 }, { stream: 'a', seq: 2 }], 1);
    bounded.append('c', 0, () => 'c');
    bounded.append('c', 0, () => 'c');
    bounded.append('c', 0, () => 'c');
    expect(() => bounded.append('c', 0, () => 'c')).toThrow(OutboxFullError);
    bounded.close();
  });

  it('a build that throws consumes no seq', () => {
    const o = new Outbox(join(dir, 'o.db'));
    expect(() => o.append('a', 0, () => { throw new Error('bad'); })).toThrow('bad');
    expect(o.append('a', 0, (seq) => String(seq)).seq).toBe(1);
    o.close();
  });

  it('keeps at most commands_kept_max command acks, newest first', () => {
    const o = new Outbox(join(dir, 'o.db'), { commands_kept_max: 2 });
    o.recordCommand('c1', 'ack1', 1);
    o.recordCommand('c2', 'ack2', 2);
    o.recordCommand('c3', 'ack3', 3);
    expect([o.commandAck('c1'), o.commandAck('c2'), o.commandAck('c3')]).toEqual([undefined, 'ack2', 'ack3']);
    o.close();
  });

  it('keeps the command acks handled last, whatever the clock said when they were handled (a clock set back)', () => {
    const path = join(dir, 'o.db');
    let o = new Outbox(path, { commands_kept_max: 2 });
    // Handled while the PC's clock ran a day ahead, then NTP set it back.
    const ahead = 1_796_000_000_000 + 86_400_000;
    o.recordCommand('c1', 'ack1', ahead);
    o.recordCommand('c2', 'ack2', ahead + 1);
    o.recordCommand('c3', 'ack3', ahead - 86_400_000);
    // c3 is the one Tilstand may send again (its ack not yet received): pruned as the "oldest", it ran twice.
    expect([o.commandAck('c1'), o.commandAck('c2'), o.commandAck('c3')]).toEqual([undefined, 'ack2', 'ack3']);
    // A command answered again (stored anew) counts as the latest, across a reopening too.
    o.recordCommand('c2', 'ack2', ahead - 86_400_000 + 1);
    o.close();
    o = new Outbox(path, { commands_kept_max: 2 });
    o.recordCommand('c4', 'ack4', ahead - 86_400_000 + 2);
    expect([o.commandAck('c2'), o.commandAck('c3'), o.commandAck('c4')]).toEqual(['ack2', undefined, 'ack4']);
    o.close();
  });

  it('validates its options', () => {
    expect(() => new Outbox(join(dir, 'o.db'), { events_unacked_max: 0 })).toThrow(/events_unacked_max: expected an integer ≥ 1, got 0/);
  });
});
