// What an export under way has made, so that a later export can take it back if this one dies.
//
// An export (export.ts) tags the cut on every table (`replay-<name>`) and writes the fixture into
// a folder beside --out (`.tilstand-export-<id>`, and for an archive `<out>.tmp-<id>`), renamed onto
// --out at the end — or inside an empty --out that exists, its entries moved into it, fixture.json
// last; one that fails takes both back itself. One killed (kill -9, a power cut) left
// them: the folder for good, and the tags holding their snapshots on the site until someone deleted
// them — and the next export with that name reused the half-made cut as its own.
//
// So an export first writes, in the data directory, a lock (`.replay-export-<id>.lock`, core/lsm
// writer-lock.ts: pid, host, boot id and start time, so a reused pid is not taken for the owner)
// and a record beside it (`.replay-export-<id>.json`: the tag it makes, when it makes one, and its
// temporary paths), and removes both when it ends, finished or failed. Each export first takes
// back what dead ones recorded (`removeDeadExports`). A live export's lock is never taken
// (Conflict, also within this process), so nothing of a live export is touched.
//
// Just before it moves the fixture onto --out, an export adds to its record what it moves (the
// device and inode of fixture.json, or of the archive: `delivered`). One killed after the move and
// before its record was removed delivered a whole fixture: the next export finds that file at
// --out, keeps the tags of its cut (which a later export of that name reuses, as after an export
// that ended) and removes only the record. They were taken back, a finished fixture's cut lost.
// An inode names the very file moved, not one put there since under the same name. The entries
// moved into an existing --out are removed only while no fixture.json is there: one that is not
// this file (another fixture copied in since, or this one after a remount renumbered its disk's
// devices or inodes) owns entries of the same names.
//
// Limits: the folder an export made for --out's parent (`mkdir -p`) stays, empty. A fixture
// delivered to a disk whose device or inode numbers change before the next export (a USB disk
// plugged in again, NFS after a reboot) is not recognised: its cut's tags go, as before `delivered`.

import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { localFileIO, type Catalog } from '../lsm/index.ts';
import { WriterLock } from '../lsm/writer-lock.ts';

const PREFIX = '.replay-export-';
const LOCK = '.lock';
const RECORD = '.json';
const RULE = 'one process per export record';

interface ExportRecordData {
  /** The `replay-` tag this export makes on the tables; absent when it reuses a cut. */
  tag?: string;
  /** The fixture folder written beside --out, then renamed onto it. */
  tempDir: string;
  /** An archive's temporary file, renamed onto --out. */
  tarTemp: string;
  /** Written just before the move onto --out: the file that is the fixture once it is there. */
  delivered?: Delivered;
}

/** A file an export moves onto --out, by what stays the same through rename(2). */
interface Delivered {
  /** Where it is once moved: --out's fixture.json, or the archive --out. */
  path: string;
  dev: number;
  ino: number;
  /** Into an empty --out that exists: the fixture's other entries, moved into it before fixture.json. */
  entries?: string[];
}

export interface ExportRecord {
  /** Where the fixture is written before it is renamed onto --out (absolute). */
  readonly tempDir: string;
  /** Where an archive is written before it is renamed onto --out (absolute). */
  readonly tarTemp: string;
  /**
   * Records that `file` is about to be moved to `path` (--out's fixture.json, or the archive), after
   * `entries` of the fixture beside it when --out is a folder that exists: from then on, if this
   * export dies, the next one keeps its tags when `path` is that file, and else removes `entries`
   * from the folder as well.
   */
  delivering(file: string, path: string, entries?: string[]): void;
  /** Removes the record and its lock: nothing of this export is to be taken back. */
  end(): void;
}

/**
 * Records an export to `out` in the data directory `data` before it makes anything: `tag` when it
 * will make that tag (not when it reuses a cut). The temporary paths are named by the record's id;
 * the fixture's folder is made inside `into` (an empty --out that exists, its real path), else
 * beside --out.
 */
export function beginExport(data: string, out: string, tag: string | undefined, into?: string): ExportRecord {
  const id = randomUUID();
  const base = join(data, `${PREFIX}${id}`);
  const lock = WriterLock.acquire(base + LOCK, `the export record ${base}${RECORD}`, RULE);
  const abs = resolve(out);
  const record: ExportRecordData = { ...(tag !== undefined ? { tag } : {}), tempDir: join(into ?? dirname(abs), `.tilstand-export-${id}`), tarTemp: `${abs}.tmp-${id}` };
  try {
    localFileIO.replaceAtomic(base + RECORD, Buffer.from(JSON.stringify(record)));
  } catch (e) {
    lock.release();
    throw e;
  }
  return {
    tempDir: record.tempDir,
    tarTemp: record.tarTemp,
    delivering(file, path, entries) {
      const st = statSync(file);
      const next: ExportRecordData = { ...record, delivered: { path: resolve(path), dev: st.dev, ino: st.ino, ...(entries !== undefined ? { entries } : {}) } };
      localFileIO.replaceAtomic(base + RECORD, Buffer.from(JSON.stringify(next)));
    },
    end() {
      rmSync(base + RECORD, { force: true });
      lock.release();
    },
  };
}

/**
 * Takes back what exports that died left, as their records say: their temporary folder and file,
 * and the tag each made, on every table of `database` that has it. Returns the records taken back.
 * An export whose process lives is left alone.
 */
export function removeDeadExports(data: string, catalog: Catalog, database: string): string[] {
  const done: string[] = [];
  for (const name of readdirSync(data)) {
    if (!name.startsWith(PREFIX) || !name.endsWith(LOCK)) continue;
    const base = join(data, name.slice(0, -LOCK.length));
    let lock: WriterLock;
    try {
      // Taken only from a dead owner (a stale lock); a live one's is Conflict.
      lock = WriterLock.acquire(base + LOCK, `the export record ${base}${RECORD}`, RULE);
    } catch {
      continue; // its export lives, or it ended just now
    }
    try {
      // None: it died before writing it, having made nothing.
      if (existsSync(base + RECORD)) takeBack(JSON.parse(readFileSync(base + RECORD, 'utf8')) as ExportRecordData, catalog, database);
      rmSync(base + RECORD, { force: true });
      done.push(basename(base));
    } finally {
      lock.release();
    }
  }
  return done;
}

/** Whether the file a record says was being moved onto --out is there: the export delivered it. */
function wasDelivered(d: Delivered | undefined): boolean {
  if (d === undefined) return false;
  try {
    const st = statSync(d.path);
    return st.dev === d.dev && st.ino === d.ino;
  } catch {
    return false; // not there: killed before the move
  }
}

function takeBack(r: ExportRecordData, catalog: Catalog, database: string): void {
  rmSync(r.tempDir, { recursive: true, force: true });
  rmSync(r.tarTemp, { force: true });
  // A whole fixture is at --out: its cut is kept, as an export that ended keeps it.
  if (wasDelivered(r.delivered)) return;
  // Killed while it moved the fixture into an empty --out: what it moved there — only while no
  // fixture.json is there. One that is, not this file, is another fixture put there since, or this
  // one after a remount gave its disk other device or inode numbers (a USB disk, NFS): its entries
  // bear the same names, and removing them left a fixture.json without its files.
  if (r.delivered?.entries !== undefined && !existsSync(r.delivered.path)) {
    for (const n of r.delivered.entries) rmSync(join(dirname(r.delivered.path), n), { recursive: true, force: true });
  }
  if (r.tag === undefined || !catalog.databaseExists(database)) return;
  for (const t of catalog.listTables(database)) {
    const table = catalog.getTable({ database, table: t });
    if (table.tags.exists(r.tag)) table.deleteTag(r.tag);
  }
}
