// The open dead letters the Ingestor closes when their event's seq is released again (DESIGN.md,
// "Exactly-once effect"): by stream key and seq, one letter each.

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

export class LettersBySeq {
  /** stream key → seq → letter: a release of a stream without one asks one map. */
  private readonly byStream = new Map<string, Map<number, SeqLetter>>();
  /** The `samePayload` letters, oldest first. */
  private readonly bounded = new Set<SeqLetter>();

  /** `max`: the most `samePayload` letters kept; past it the oldest is forgotten. */
  constructor(private readonly max: number) {}

  /** Remembers a letter; one of the same stream and seq already there is forgotten (the newest is kept). */
  add(letter: SeqLetter): void {
    let bySeq = this.byStream.get(letter.key);
    if (bySeq === undefined) this.byStream.set(letter.key, (bySeq = new Map()));
    const before = bySeq.get(letter.seq);
    if (before !== undefined) this.bounded.delete(before);
    bySeq.set(letter.seq, letter);
    if (!letter.samePayload) return;
    this.bounded.add(letter);
    if (this.bounded.size > this.max) {
      const oldest = this.bounded.values().next().value!;
      this.take(oldest.key, oldest.seq);
    }
  }

  /** The letter of (stream key, seq), forgotten; undefined when there is none. */
  take(key: string, seq: number): SeqLetter | undefined {
    if (this.byStream.size === 0) return undefined;
    const bySeq = this.byStream.get(key);
    const letter = bySeq?.get(seq);
    if (letter === undefined) return undefined;
    bySeq!.delete(seq);
    if (bySeq!.size === 0) this.byStream.delete(key);
    this.bounded.delete(letter);
    return letter;
  }
}
