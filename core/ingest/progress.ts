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
