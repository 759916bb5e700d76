// The open dead letters the Ingestor closes when their event's seq is released again (DESIGN.md,
// "Exactly-once effect"): by stream key and seq, every letter of it.

/** A letter to close when its stream releases `seq` again. */
export interface SeqLetter {
  readonly key: string;
  readonly seq: number;
  /** The letter's journal position. */
  readonly position: bigint;
  /**
   * Closed only when the released event's payload is the letter's, byte for byte: a
   * `seq_far_ahead` letter, whose seq may come with another event (the stream reaching it). Such
   * letters are bounded (`max`, the oldest forgotten). The others (an event the reorder buffer
   * dropped, whose resend is asked for) are closed by the seq alone and are not bounded here: they
   * are the letters open at the start, whose number bounds them.
   */
  readonly samePayload: boolean;
}

/** What `take` returns without a letter: one shared empty list, no allocation per released event. */
const NONE: readonly SeqLetter[] = Object.freeze([]);

export class LettersBySeq {
  /**
   * stream key → seq → its letters, oldest first (a release of a stream without one asks one map).
   * More than one at a seq: a letter open at the start whose event the buffer dropped and a far
   * letter of its resend, or the same event given up as far twice; each closes on its own condition.
   */
  private readonly byStream = new Map<string, Map<number, SeqLetter[]>>();
  /** The `samePayload` letters, oldest first. */
  private readonly bounded = new Set<SeqLetter>();

  /** `max`: the most `samePayload` letters kept; past it the oldest is forgotten. */
  constructor(private readonly max: number) {}

  /**
   * Remembers a letter beside the others of its stream and seq; one at the same position already
   * there is forgotten (one letter, remembered once).
   */
  add(letter: SeqLetter): void {
    let bySeq = this.byStream.get(letter.key);
    if (bySeq === undefined) this.byStream.set(letter.key, (bySeq = new Map()));
    let at = bySeq.get(letter.seq);
    if (at === undefined) bySeq.set(letter.seq, (at = []));
    const same = at.findIndex((l) => l.position === letter.position);
    if (same >= 0) this.bounded.delete(at.splice(same, 1)[0]!);
    at.push(letter);
    if (!letter.samePayload) return;
    this.bounded.add(letter);
    if (this.bounded.size > this.max) this.forget(this.bounded.values().next().value!);
  }

  /** The letters of (stream key, seq), oldest first, forgotten; empty when there is none. */
  take(key: string, seq: number): readonly SeqLetter[] {
    if (this.byStream.size === 0) return NONE;
    const bySeq = this.byStream.get(key);
    const at = bySeq?.get(seq);
    if (at === undefined) return NONE;
    bySeq!.delete(seq);
    if (bySeq!.size === 0) this.byStream.delete(key);
    for (const l of at) this.bounded.delete(l);
    return at;
  }

  /** Forgets one letter (the oldest `samePayload` one, past the bound). */
  private forget(letter: SeqLetter): void {
    this.bounded.delete(letter);
    const bySeq = this.byStream.get(letter.key)!;
    const at = bySeq.get(letter.seq)!;
    at.splice(at.indexOf(letter), 1);
    if (at.length > 0) return;
    bySeq.delete(letter.seq);
    if (bySeq.size === 0) this.byStream.delete(letter.key);
  }
}
