// V8 flags of a site process, set once at its start (bin/tilstand.mjs, electron/main.mjs) and by
// the benchmark's memory child (bench/tasks.ts `memory`), so the figure is the site's.
//
// `--heap-growing-percent=25`: after a full collection V8 lets the old generation grow to
// (1 + 25 %) × the live bytes before the next one, instead of up to 4× on a fast mutator. The
// site's garbage is short-lived (parsed events, merge records, encoder buffers) and its live state
// small, so the default let the heap of a 1 M-row site reach 330–350 MB for ~90 MB live (peak RSS
// 580 MB); with the flag the peak stays within ~1.3× of the live state (peak RSS ≈ 320 MB). It
// costs CPU in more frequent mark-compacts: +21 % process CPU on the bench's ingest-bound child,
// ≈ 7 µs an event at full rate (core/lsm/DESIGN.md, "Memory of a site process"). It is not
// a limit: the heap still grows as far as the live state needs, so a legitimate load never fails
// for it. V8 reads the flag at every collection, so setting it at run time (it is not allowed in
// NODE_OPTIONS) takes effect; `--max-semi-space-size` does not (fixed when the heap is set up).

import { setFlagsFromString } from 'node:v8';

/** The flags, in the form of a node command line. */
export const SITE_V8_FLAGS: readonly string[] = ['--heap-growing-percent=25'];

/** Sets SITE_V8_FLAGS in this process (idempotent). */
export function applySiteV8Flags(): void {
  for (const f of SITE_V8_FLAGS) setFlagsFromString(f);
}
