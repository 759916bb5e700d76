// HQ's data format mark (DESIGN.md, "HQ's data format mark"): which data format the state a site
// sent to HQ is in, so that `tilstand restore` on a replacement PC does not rebuild, with an older
// program, a directory that program would misread. The site's own mark is core/site's
// `<data>/data-format.json` (core/site/DESIGN.md, "Data format"); this is its copy at HQ:
//
//   site_<id>.db/.tilstand/data-format.json   {written, requires, by, note}   a pointer (visible whole)
//
//   written   the highest data format of a program that sent to this prefix
//   requires  the lowest data format a program must know to restore from it
//   by        the program (name and version) that last raised either number
//
// The numbers are core/site's (DATA_FORMAT, DATA_FORMAT_REQUIRES): core/sync may not import
// core/site, so the site passes them in (`ProgramDataFormat`: SyncEngine option `dataFormat`,
// restore option `dataFormat`). Never lowered, as the directory's mark is not: a site taken back
// to an older version (the copy from before an upgrade) leaves at HQ the tags the newer one sent.

import { SyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import { getIfPresent, type SyncTarget } from './targets/target.ts';

/** The running program's data format, as core/site gives it (its data-format.ts). */
export interface ProgramDataFormat {
  /** The data format this program writes and understands (`DATA_FORMAT`). */
  written: number;
  /** The lowest data format a program must know to read what this one writes (`DATA_FORMAT_REQUIRES`). */
  requires: number;
  /** `tilstand <version>`. */
  by: string;
}

export interface HqDataFormat {
  written: number;
  requires: number;
  /** The program that last raised the mark; null when it did not say. */
  by: string | null;
}

/** `site_<id>.db/.tilstand/data-format.json`, beside the sender marker. */
export const hqDataFormatKey = (site: string): string => `${sitePrefix(site)}.tilstand/data-format.json`;

/**
 * HQ's mark for `site`, or undefined when there is none (nothing sent yet, or sent only by versions
 * from before the mark). One that is not the mark is Verification (exit 4, corruption), naming the
 * key: guessed, an older program could restore what a newer one requires.
 */
export async function readHqDataFormat(target: SyncTarget, site: string): Promise<HqDataFormat | undefined> {
  const key = hqDataFormatKey(site);
  const bytes = await getIfPresent(target, key);
  if (bytes === undefined) return undefined;
  const m = parseFormatMark(bytes.toString('utf8'));
  if (typeof m !== 'string') return m;
  throw new SyncError(
    'Verification',
    `HQ's data format mark ${key} at ${target.description} is damaged: ${m}; expected {"written": <n>, "requires": <n>, "by": "<program>"} with whole numbers from 1 (a running site's next sync writes it again; for a site that is gone, remove it at HQ and restore with the version the site last ran, or a later one)`,
  );
}

/**
 * A data format mark's text, `{written, requires, by}` — the site's `<data>/data-format.json`
 * (core/site data-format.ts) and HQ's copy of it alike — or why it is not one (`not JSON`,
 * `'written' is 0`, …), for the caller to say in its own words where the mark is and what to do.
 */
export function parseFormatMark(text: string): HqDataFormat | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'not a JSON object';
  const o = v as Record<string, unknown>;
  for (const k of ['written', 'requires'] as const) {
    const n = o[k];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) return `'${k}' is ${JSON.stringify(n) ?? 'missing'}`;
  }
  return { written: o.written as number, requires: o.requires as number, by: typeof o.by === 'string' ? o.by : null };
}

/** Writes HQ's mark whole (a pointer). */
export async function writeHqDataFormat(target: SyncTarget, site: string, m: HqDataFormat): Promise<void> {
  const note = "The Tilstand data format of this site's state at HQ: `tilstand restore` of a program that knows a lower format than \"requires\" refuses to restore it (core/sync/DESIGN.md). Written by the site's sync.";
  await target.putPointer(hqDataFormatKey(site), Buffer.from(`${JSON.stringify({ written: m.written, requires: m.requires, by: m.by, note }, null, 2)}\n`));
}

/**
 * What HQ's mark must say once `program` has sent to it: each number the higher of HQ's and the
 * program's, `by` the program when it raised one. Undefined when HQ's says that already (nothing
 * to write). A damaged mark (`found` 'damaged') is replaced by the program's numbers.
 */
export function raisedHqDataFormat(found: HqDataFormat | undefined | 'damaged', program: ProgramDataFormat): HqDataFormat | undefined {
  if (found === undefined || found === 'damaged') return { written: program.written, requires: program.requires, by: program.by };
  const written = Math.max(found.written, program.written);
  const requires = Math.max(found.requires, program.requires);
  if (written === found.written && requires === found.requires) return undefined;
  return { written, requires, by: program.by };
}

/**
 * The gate of `restore`: HQ's mark read first (one GET), before anything is written. A mark whose
 * `requires` is above what `program` knows is refused with exit 2 (InvalidArgument), as core/site
 * refuses a data directory a newer program requires: the operator runs the wrong program on sound
 * data. No mark (an HQ older versions sent to) passes; a damaged one is Verification (exit 4).
 */
export async function checkHqDataFormat(target: SyncTarget, site: string, program: ProgramDataFormat): Promise<HqDataFormat | undefined> {
  const m = await readHqDataFormat(target, site);
  if (m !== undefined && m.requires > program.written) {
    throw new SyncError(
      'InvalidArgument',
      `HQ's copy of site ${site} (${target.description}) has data format ${m.written}${m.by ? ` (sent by ${m.by})` : ''} and requires a program that knows data format ${m.requires} or later; ` +
        `this one (${program.by}) knows data format ${program.written} and would restore a directory it misreads, so nothing was restored or written. ` +
        `Install ${m.by ? `${m.by} (the version that sent it) or a later one` : 'the version the site ran or a later one'} and run its \`tilstand restore\` (docs/operations.md, "Upgrading")`,
    );
  }
  return m;
}
