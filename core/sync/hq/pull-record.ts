// What `hq pull` wrote into a warehouse, so that a pull again can tell an analyst's own writes
// from its own. A pull makes the copy HQ's: it removes every snapshot JSON HQ does not have and
// writes HQ's snapshot, tag and schema files over local ones of the same name (mirror.ts). In a
// pulled warehouse an analyst may commit (snapshots after the pulled one) or tag (a name the site
// may give a tag later): pulled again, those were lost without a word.
//
// The record, `<warehouse>/site_<id>.db/.tilstand/pulled.json` (a dot folder: Paimon's catalogs
// and core/lsm's ignore it), holds per table the SHA-256 of each snapshot, tag and schema file a
// pull left there. A local one of those whose bytes the record does not hold, and which a pull
// would remove (any snapshot JSON) or overwrite (HQ lists the same name), is an own write
// (`ownWrites`); `hq pull` refuses to run over them unless --force. A table without a record
// (pulled by a version before it) holds one snapshot after a pull: its lowest snapshot is taken
// as pulled, every other one as an own write, and its tags and schemas as HQ's. A table is
// recorded as soon as the mirror has copied it (`recordPull`), so a pull that fails midway has
// recorded what it wrote of the tables it finished. Of the table it was copying, it has recorded
// what it was about to write: the mirror hands a table's schema, snapshot and tag files over
// before writing them (`recordUnfinished`, kept under `.unfinished/<table>` — no table's name
// starts with a dot — until the table is recorded), so a pull killed between two of them (a
// snapshot written, its tag not) left no file a rerun takes for an own write. Without it only
// `--force` went on.
//
// Concurrency: one pull per warehouse at a time (two at once may each record what the other wrote).

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { localFileIO } from '../../lsm/index.ts';
import { SyncError } from '../errors.ts';
import { sitePrefix } from '../names.ts';
import type { ObjectInfo } from '../targets/target.ts';
import { tablesOf } from './mirror.ts';

/** A table's files a pull left: path in the table's folder (`snapshot/snapshot-7`) → SHA-256. */
type TableRecord = Record<string, string>;
type PullRecord = Record<string, TableRecord>;

/** The folders of a table whose files a pull removes or overwrites, and their files' names. */
const KEPT_FILES: readonly [string, RegExp][] = [
  ['schema', /^schema-\d+$/],
  ['snapshot', /^snapshot-\d+$/],
  ['tag', /^tag-.+$/],
];

/** Own writes named in the refusal; the rest are counted. */
const NAMED_MAX = 10;

const siteFolder = (warehouse: string, site: string) => join(warehouse, sitePrefix(site).slice(0, -1));
const recordPath = (warehouse: string, site: string) => join(siteFolder(warehouse, site), '.tilstand', 'pulled.json');
const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const sha256 = (path: string) => sha256Of(fs.readFileSync(path));

/**
 * A record without a prototype: tables are its members by name, and a table may be named
 * `__proto__` (assigned on a plain object, it set the prototype and was never written) or
 * `constructor` (read from a plain object without it, `Object`: a record that is none).
 */
const emptyRecord = (): PullRecord => Object.create(null) as PullRecord;

/** The record of earlier pulls of `site` into `warehouse`; {} when there is none or it does not read. */
function readRecord(warehouse: string, site: string): PullRecord {
  try {
    const r: unknown = JSON.parse(fs.readFileSync(recordPath(warehouse, site), 'utf8'));
    return r !== null && typeof r === 'object' && !Array.isArray(r) ? Object.assign(emptyRecord(), r) : emptyRecord();
  } catch {
    return emptyRecord(); // none (a first pull, or one by a version before the record): the snapshot rule holds
  }
}

/** The schema, snapshot and tag files of a local table folder, as paths in it (`tag/tag-x`), sorted. */
function keptFiles(tableDir: string): string[] {
  const out: string[] = [];
  for (const [folder, name] of KEPT_FILES) {
    const dir = join(tableDir, folder);
    if (!fs.existsSync(dir)) continue;
    for (const n of fs.readdirSync(dir).sort()) if (name.test(n)) out.push(`${folder}/${n}`);
  }
  return out;
}

const snapshotId = (rel: string) => Number(rel.slice('snapshot/snapshot-'.length));

/** Where the record keeps what a pull was about to write of `table` (`recordUnfinished`). */
const unfinishedOf = (table: string) => `.unfinished/${table}`;

function writeRecord(warehouse: string, site: string, record: PullRecord): void {
  const path = recordPath(warehouse, site);
  fs.mkdirSync(dirname(path), { recursive: true });
  localFileIO.replaceAtomic(path, Buffer.from(JSON.stringify(record, null, 2) + '\n'));
}

/**
 * The files (`<table>/<path>`) in the local copy of `site` that no pull wrote and that a pull of
 * what HQ lists (`listed`, the site's keys) would remove or overwrite.
 */
export function ownWrites(warehouse: string, site: string, listed: readonly ObjectInfo[]): string[] {
  const record = readRecord(warehouse, site);
  const atHq = new Set(listed.map((o) => o.key));
  const out: string[] = [];
  for (const table of tablesOf(site, listed)) {
    const tableDir = join(siteFolder(warehouse, site), table);
    const files = keptFiles(tableDir);
    const pulled = record[table];
    const unfinished = record[unfinishedOf(table)] ?? {};
    const snapshots = files.filter((f) => f.startsWith('snapshot/')).map(snapshotId);
    const lowest = snapshots.length > 0 ? Math.min(...snapshots) : undefined;
    for (const rel of files) {
      const isSnapshot = rel.startsWith('snapshot/');
      if (!isSnapshot && !atHq.has(`${sitePrefix(site)}${table}/${rel}`)) continue; // kept by the pull
      // Hashed only when the rule for a copy without a record does not already take it as pulled.
      if (pulled === undefined && (!isSnapshot || snapshotId(rel) === lowest)) continue;
      const hash = sha256(join(tableDir, rel));
      if ((pulled === undefined || pulled[rel] !== hash) && unfinished[rel] !== hash) out.push(`${table}/${rel}`);
    }
  }
  return out;
}

/** Refuses (Conflict) a pull that would remove or overwrite `own` (`ownWrites`) in `warehouse`. */
export function refuseOwnWrites(warehouse: string, site: string, own: readonly string[]): void {
  if (own.length === 0) return;
  const named = own.slice(0, NAMED_MAX).join(', ') + (own.length > NAMED_MAX ? `, and ${own.length - NAMED_MAX} more` : '');
  throw new SyncError(
    'Conflict',
    `${siteFolder(warehouse, site)} holds writes that no pull made, which this pull would remove or overwrite: ${named}; pull into another warehouse, or pass --force to replace them with HQ's copy`,
  );
}

/**
 * Records what a pull left of one table in the local copy, once the mirror has done it (mirrorSite
 * `onTableCopied`): the files it copied or wrote (`copied`, keys) — not those of a listing before
 * it, which a site syncing meanwhile makes older than the copy, nor only once the whole pull is
 * done, which a pull that fails midway never is: a snapshot or tag it wrote was then no pull's, and
 * the next pull refused it as an own write — and those an earlier pull recorded that are still as
 * it left them (a tag HQ has dropped since, which the pull keeps).
 */
export function recordPull(warehouse: string, site: string, table: string, copied: readonly string[]): void {
  const record = readRecord(warehouse, site);
  const held = new Set(copied);
  const tableDir = join(siteFolder(warehouse, site), table);
  const earlier = record[table] ?? {};
  const unfinished = record[unfinishedOf(table)] ?? {};
  const now: TableRecord = {};
  for (const rel of keptFiles(tableDir)) {
    const hash = sha256(join(tableDir, rel));
    if (held.has(`${sitePrefix(site)}${table}/${rel}`) || earlier[rel] === hash || unfinished[rel] === hash) now[rel] = hash;
  }
  record[table] = now;
  delete record[unfinishedOf(table)];
  writeRecord(warehouse, site, record);
}

/**
 * Records the files of `table` (key → bytes: its schema, snapshot and tag files) a pull is about
 * to write, before it writes them (mirrorSite `beforeWrite`): a pull stopped before the table is
 * recorded (`recordPull`) then left none that its rerun refuses as an own write. Added to what
 * an earlier stopped pull recorded, which may have written some of its files.
 */
export function recordUnfinished(warehouse: string, site: string, table: string, files: ReadonlyMap<string, Uint8Array>): void {
  const record = readRecord(warehouse, site);
  const tablePrefix = `${sitePrefix(site)}${table}/`;
  const unfinished: TableRecord = { ...record[unfinishedOf(table)] };
  for (const [key, bytes] of files) {
    if (key.startsWith(tablePrefix)) unfinished[key.slice(tablePrefix.length)] = sha256Of(bytes);
  }
  record[unfinishedOf(table)] = unfinished;
  writeRecord(warehouse, site, record);
}
