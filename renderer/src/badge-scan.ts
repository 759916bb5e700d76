// Tells a badge scan from typing by its pace. A badge reader types the card's number and Enter into
// whatever has the focus, each key a few ms after the last; a hand mostly takes 100 ms and more. The
// sign-in screen's badge field has the focus when it appears, but after a refused PIN the focus is
// in the PIN field (or on the button pressed), and a scan there went out as that PIN — one more
// attempt toward the name's lockout, the card's number sent as a PIN. A run of keys this quick
// ending in Enter is a scan, wherever it was typed (SignIn.tsx). By its mean pace, not each key's:
// one late key (in chromium driven at 1 ms a key, one came 58 ms after the last) cut the card's
// number in two, its head left in the field. A run that began right after another key (a Tab) or
// keys into another field is no scan: a reader types into one place from a pause, while a password
// manager's auto-type (name, Tab, password, Enter, each key a few ms apart) moves between fields —
// taken for a scan, its password went out as a badge and it never signed in. Auto-typed into the
// password field alone (no name, no Tab before it), it is told by the focus, not here: the screen
// takes a run into the PIN field the person chose as typing (SignIn.tsx `secretChosen`).
//
// Pure: the screen hands in each key's `timeStamp` (the event's, not the clock when it is handled,
// so a busy page does not slow a scan down).

/** A pause longer than this ends a run of keys, Enter included: a reader does not pause so long within a card, a hand mostly does between two keys. */
export const SCAN_KEY_GAP_MS_MAX = 100;
/** A scan's keys come at least this quick on average, Enter included: readers type a key every 1–30 ms, a hand's quickest runs take 60 ms and more a key. */
export const SCAN_KEY_MEAN_MS_MAX = 35;
/** The fewest characters of a scan: the site's shortest badge (core/inbox users.ts BADGE_CHARS_MIN). */
export const SCAN_CHARS_MIN = 4;

/** The keys typed since the last pause, and where: the field's name and what it held before them. */
export interface KeyRun {
  chars: string;
  firstMs: number;
  lastMs: number;
  /** The name of the element they went to (null: one with none, such as a button). */
  field: string | null;
  /** What that field held before the run (the name field and the language picker get it back when the run was a scan; the PIN field is emptied). */
  before: string;
  /** Begun within SCAN_KEY_GAP_MS_MAX of another key, or of keys into another place: typed on from them, no scan. */
  led?: boolean;
}

/** The key that came, as the screen's key handler has it. */
export interface KeyDown {
  key: string;
  timeStamp: number;
  /** A key held down: its repeats come as quick as a scan's keys. */
  repeat?: boolean;
  target: { name?: unknown; value?: unknown };
}

/**
 * The run after `e` (not Enter): a character carries it on, if it came within SCAN_KEY_GAP_MS_MAX
 * of the last into the same place, else starts one (what the field held then stays: a PIN begun by hand); Shift (a scan's capitals) leaves it as it is;
 * any other key, or a key held down, ends it. `otherKeyMs`: when the last key that was neither a
 * character, Shift nor Enter came (Tab, Backspace, a key held down; null: none) — a run begun within
 * SCAN_KEY_GAP_MS_MAX of it, or of the last run's keys into another place, is `led`.
 */
export function runAfter(run: KeyRun | null, e: KeyDown, otherKeyMs: number | null = null): KeyRun | null {
  if (e.key === 'Shift') return run;
  if (e.key.length !== 1 || e.repeat) return null;
  const field = typeof e.target.name === 'string' && e.target.name !== '' ? e.target.name : null;
  const close = (ms: number | null | undefined) => typeof ms === 'number' && e.timeStamp - ms <= SCAN_KEY_GAP_MS_MAX;
  if (run && run.field === field && close(run.lastMs)) return { ...run, chars: run.chars + e.key, lastMs: e.timeStamp };
  const led = close(run?.lastMs) || close(otherKeyMs);
  return { chars: e.key, firstMs: e.timeStamp, lastMs: e.timeStamp, field, before: typeof e.target.value === 'string' ? e.target.value : '', ...(led ? { led } : {}) };
}

/** The scan that an Enter at `atMs` ends, or null: the run was too short, typed on from other keys (`led`), paused before the Enter, or came at a hand's pace. */
export function scanEndedBy(run: KeyRun | null, atMs: number): KeyRun | null {
  if (!run || run.led === true || run.chars.length < SCAN_CHARS_MIN || atMs - run.lastMs > SCAN_KEY_GAP_MS_MAX) return null;
  // As many gaps as characters: between them, and the last one's to the Enter.
  return (atMs - run.firstMs) / run.chars.length <= SCAN_KEY_MEAN_MS_MAX ? run : null;
}
