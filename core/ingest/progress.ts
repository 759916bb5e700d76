// Ingest progress as it is stored in a table's snapshot: the journal position and the
// per-(module, stream) high-water marks, committed in the SAME snapshot as the rows they describe
// (`TableWriter.commit(properties)`), so rows and progress can never disagree after a crash.
//
//   tilstand.journal.position        = F: every journal entry with position ≤ F has been fully
//                                      processed (applied, dead-lettered or dropped as duplicate)
//                                      and its effect on this table is in this snapshot.
//   tilstand.hwm.<module>/<stream>   = H: every seq ≤ H of that stream that the sequencer released
//                                      has its effect on this table in this snapshot (and no seq > H).
//
// Concurrency: pure functions. Invariant: `readProgress(progressProperties(p, h))` gives back (p, h).

export const POSITION_PROPERTY = 'tilstand.journal.position';
export const HWM_PROPERTY_PREFIX = 'tilstand.hwm.';
/**
 * `tilstand.skipped.<module>/<stream>` = `from-to@atMs,…`: the ranges a gap skip gave up on
 * (sequencer.ts `SkippedRange`), on dead_letters' snapshot only, with its hwm: a late event of one
 * of them is a `late_after_gap` letter after a restart too (CONTRACTS.md §4).
 */
export const SKIPPED_PROPERTY_PREFIX = 'tilstand.skipped.';

export interface SkippedRangeProperty {
  readonly from: number;
  readonly to: number;
  readonly atMs: number;
}

/** `<module>/<stream>`; module and stream names never contain '/' (envelope.ts NAME_PATTERN). */
export const streamKey = (module: string, stream: string): string => `${module}/${stream}`;

export function splitStreamKey(key: string): { module: string; stream: string } {
  const i = key.indexOf('/');
  return { module: key.slice(0, i), stream: key.slice(i + 1) };
}

export interface TableProgress {
  /** Journal position F (0n: nothing yet). */
  readonly position: bigint;
  /** streamKey → highest released seq whose effect is in the snapshot. */
  readonly hwm: ReadonlyMap<string, number>;
}

export const NO_PROGRESS: TableProgress = { position: 0n, hwm: new Map() };

export function progressProperties(position: bigint, hwm: ReadonlyMap<string, number>): Record<string, string> {
  const out: Record<string, string> = { [POSITION_PROPERTY]: position.toString() };
  for (const [k, v] of hwm) out[HWM_PROPERTY_PREFIX + k] = String(v);
  return out;
}

export function skippedProperties(streams: readonly { module: string; stream: string; ranges: readonly SkippedRangeProperty[] }[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of streams) out[SKIPPED_PROPERTY_PREFIX + streamKey(s.module, s.stream)] = s.ranges.map((r) => `${r.from}-${r.to}@${r.atMs}`).join(',');
  return out;
}

/**
 * The skipped ranges of dead_letters' snapshot by streamKey. A value that does not read is left
 * out and named in `bad` (the caller warns): it only makes late events silent duplicates again,
 * no reason to refuse the site's start.
 */
export function readSkipped(properties: Readonly<Record<string, string>>): { ranges: Map<string, SkippedRangeProperty[]>; bad: string[] } {
  const ranges = new Map<string, SkippedRangeProperty[]>();
  const bad: string[] = [];
  for (const [key, value] of Object.entries(properties)) {
    if (!key.startsWith(SKIPPED_PROPERTY_PREFIX)) continue;
    const k = key.slice(SKIPPED_PROPERTY_PREFIX.length);
    const list: SkippedRangeProperty[] = [];
    let ok = k.includes('/') && value !== '';
    for (const part of ok ? value.split(',') : []) {
      const m = /^(\d{1,16})-(\d{1,16})@(\d{1,16})$/.exec(part);
      const [from, to, atMs] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
      // atMs: a time Date can show (±8.64e15 ms), as the letter's detail names it.
      if (!m || !Number.isSafeInteger(to) || !(atMs <= 8.64e15) || from < 1 || to < from) {
        ok = false;
        break;
      }
      list.push({ from, to, atMs });
    }
    if (ok) ranges.set(k, list);
    else bad.push(`${key}='${value.slice(0, 100)}'`);
  }
  return { ranges, bad };
}

/** Reads progress back from snapshot properties; throws naming the table on a malformed value. */
export function readProgress(properties: Readonly<Record<string, string>>, table: string): TableProgress {
  const bad = (key: string, value: string) => new Error(`table ${table}: snapshot property ${key}='${value}' is not a non-negative integer`);
  let position = 0n;
  const raw = properties[POSITION_PROPERTY];
  if (raw !== undefined) {
    if (!/^\d{1,19}$/.test(raw)) throw bad(POSITION_PROPERTY, raw);
    position = BigInt(raw);
  }
  const hwm = new Map<string, number>();
  for (const [key, value] of Object.entries(properties)) {
    if (!key.startsWith(HWM_PROPERTY_PREFIX)) continue;
    const n = Number(value);
    if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(n)) throw bad(key, value);
    const k = key.slice(HWM_PROPERTY_PREFIX.length);
    if (!k.includes('/')) throw new Error(`table ${table}: snapshot property ${key} does not name <module>/<stream>`);
    hwm.set(k, n);
  }
  return { position, hwm };
}
