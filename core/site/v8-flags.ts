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
//
// What is fixed when the process starts goes on its launcher's command line and environment
// instead: SITE_LAUNCH below, used by `npm start`, the systemd unit (build/tilstand.service), the
// Windows service's documented NSSM settings, the Electron shell (which relaunches itself with
// them: electron/main-process.ts `relaunchWithLaunchSettings`) and the benchmark's memory child
// (one list; tests check each launcher against it). Measured on the bench's memory child (1 M rows; 3 runs each,
// maxRSS median, process CPU median; core/lsm/DESIGN.md, "Memory of a site process"):
//   neither                     278 MB  37.9 s
//   --max-semi-space-size=8     249 MB  43.3 s   (young generation 32 → 16 MB of RSS)
//   MALLOC_ARENA_MAX=2          254 MB  36.6 s   (glibc's malloc: two arenas, not one per thread)
//   both                        231 MB  40.5 s
//   --max-semi-space-size=4     233 MB  46.4 s
// The semi-space cap is not a heap limit: a young generation that fills is scavenged (objects
// that survive move to the old generation, which grows as the live state needs), so no load
// fails for it; it costs CPU in more frequent scavenges: 7–18 % more process CPU with both
// settings in the memory child, which ingests at full rate; nothing measurable at a site's real
// rates (hundreds of events a second). MALLOC_ARENA_MAX is glibc's (Linux); Windows'
// heap has no arenas and ignores it.

import { setFlagsFromString } from 'node:v8';

/** The flags, in the form of a node command line. */
export const SITE_V8_FLAGS: readonly string[] = ['--heap-growing-percent=25'];

/**
 * How a site process is launched: node flags before the script (or in NODE_OPTIONS, which
 * accepts these), and environment variables. Fixed at process start, so a running process cannot
 * set them; a process started without them runs, only with a higher peak RSS.
 */
export const SITE_LAUNCH: { readonly nodeFlags: readonly string[]; readonly env: Readonly<Record<string, string>> } = {
  nodeFlags: ['--max-semi-space-size=8'],
  env: { MALLOC_ARENA_MAX: '2' },
};

/**
 * SITE_LAUNCH's node flags this process was not started with (argv or NODE_OPTIONS), and its
 * environment variables not set (not on Windows, where they mean nothing).
 */
export function missingLaunchSettings(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] {
  const opts = (env.NODE_OPTIONS ?? '').split(/\s+/);
  const missing = SITE_LAUNCH.nodeFlags.filter((f) => !execArgv.includes(f) && !opts.includes(f));
  if (platform !== 'win32') for (const [k, v] of Object.entries(SITE_LAUNCH.env)) if (env[k] !== v) missing.push(`${k}=${v}`);
  return missing;
}

/**
 * A word of a launch command as the shell takes it back: quoted when it holds anything but plain
 * characters (Windows: its paths' backslashes are plain). For the commands that start a site, or
 * the Electron shell, with SITE_LAUNCH (core/site/cli/start.ts `memoryLines`, electron
 * main-process.ts).
 */
export function shellWord(w: string, platform: NodeJS.Platform): string {
  if (platform === 'win32') return /^[A-Za-z0-9_./:=,@%+\\-]+$/.test(w) ? w : `"${w.replace(/"/g, '\\"')}"`;
  return /^[A-Za-z0-9_./:=,@%+-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** Sets SITE_V8_FLAGS in this process (idempotent). */
export function applySiteV8Flags(): void {
  for (const f of SITE_V8_FLAGS) setFlagsFromString(f);
}
