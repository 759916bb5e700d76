// The sender marker (DESIGN.md "One sender per site at HQ"): which data directory owns a site's
// prefix at HQ. Two PCs sending as one site (a replaced PC back online after its successor was
// restored from HQ, a copied data directory) each wrote their own snapshot, hints and tags there,
// and each one's prune removed the other's snapshot JSON: HQ's latest flipped between two states.
//
//   local  `sync_state` senderId (random, minted once) and senderWhere {machine, dataDir}: where
//          it was minted (machine: /etc/machine-id, '' where there is none). An outbox found on another machine or in another directory (a copy,
//          a clone of the data disk, a move) mints a new id: the copy is refused at HQ until
//          taken over.
//   HQ     `site_<id>.db/.tilstand/sender.json` {format, sender, host, dataDir, sinceMs, by}:
//          written by the first send when absent, by `restore` (the successor adopts it) and by
//          a take-over. The engine reads it at each planning, once per round and before each
//          pointer, prune and remove; another sender's id stops it, and so does its absence where
//          this outbox had one (`markerHeldSince`: a share not mounted, HQ's copy deleted).
//   fs     `sync_state` hqFileSystem (folder targets): whether HQ's folder was on another file
//          system than the data directory when this outbox last saw its marker there. A take-over
//          while the marker is gone is refused when the folder is now on the data directory's own
//          (`ontoOwnDisk`: the share not mounted), unless the operator says it moved there.

import { randomUUID } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { isSyncError, SyncError } from './errors.ts';
import { senderMarkerKey } from './names.ts';
import type { Outbox } from './outbox.ts';
import { getIfPresent, type SyncTarget } from './targets/target.ts';

/** Why a marker was written: the first send to a prefix without one, a restore from HQ, an operator's take-over. */
export type MarkerCause = 'first send' | 'restore' | 'take-over';

export interface SenderMarker {
  format: 1;
  /** The owning data directory's sender id (`sync_state` senderId). */
  sender: string;
  host: string;
  dataDir: string;
  /** When this sender took the prefix. */
  sinceMs: number;
  by: MarkerCause;
}

const SENDER_ID = 'senderId';
const SENDER_WHERE = 'senderWhere';
/** `sync_state` key: the `sinceMs` of the marker naming this directory that its outbox knows of (wrote or was told of). */
export const MARKER_SINCE = 'senderMarkerSinceMs';
/**
 * `sync_state` key: the `sinceMs` of a marker this outbox is writing and has not yet seen at HQ (a
 * put that failed, or whose answer the line lost). While it is set, a marker absent at HQ is no
 * proof that HQ's copy went (`markerHeldSince`).
 */
export const MARKER_UNCONFIRMED = 'senderMarkerUnconfirmed';
/** `sync_state` key of the refusal the last check found (statusOf reports it). */
export const SENDER_CONFLICT = 'senderConflict';
/**
 * `sync_state` key (folder targets): `HqFileSystem` as it stood when this outbox last saw its
 * marker in HQ's folder. Unset for S3, a new target, and an outbox of a version before it.
 */
export const HQ_FILE_SYSTEM = 'hqFileSystem';

let machine: string | undefined;
/**
 * This machine's id: /etc/machine-id (systemd; regenerated when an installed system is cloned
 * properly), else D-Bus's copy, else '' — only the folder then tells a copy (Windows, a container
 * without one). Not the host name: a PC renamed by IT, or a container recreated with a new name,
 * would read as a copy, and its sync would stop until someone took the prefix over.
 */
export function machineId(): string {
  if (machine !== undefined) return machine;
  for (const p of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      const v = readFileSync(p, 'utf8').trim();
      if (/^[0-9a-f]{16,64}$/i.test(v)) return (machine = v);
    } catch {
      // not there: the next
    }
  }
  return (machine = '');
}

function canonicalDir(dataDir: string): string {
  try {
    return realpathSync(dataDir);
  } catch {
    return resolve(dataDir);
  }
}

/**
 * This data directory's sender id, minted on first use. An id recorded on another machine or for
 * another directory path is replaced by a new one (logged): the copy must not send as the
 * original. A moved directory is taken for a copy too; `sync now --take-over` settles either.
 */
export function localSender(outbox: Outbox, dataDir: string, log: (line: string) => void = () => {}): string {
  const here = { machine: machineId(), dataDir: canonicalDir(dataDir) };
  const id = outbox.getState(SENDER_ID);
  let was: { machine?: unknown; dataDir?: unknown } | undefined;
  try {
    was = JSON.parse(outbox.getState(SENDER_WHERE) ?? 'null') ?? undefined;
  } catch {
    was = undefined;
  }
  if (id !== undefined && was?.machine === here.machine && was?.dataDir === here.dataDir) return id;
  const fresh = randomUUID();
  outbox.db.transaction(() => {
    outbox.setState(SENDER_ID, fresh);
    outbox.setState(SENDER_WHERE, JSON.stringify(here));
  })();
  if (id !== undefined) {
    log(
      `sync: this outbox was sender ${id} on machine ${String(was?.machine)} in ${String(was?.dataDir)}, and is now on ${here.machine} in ${here.dataDir} (a copied or moved data directory): ` +
        `it sends as ${fresh}, which HQ refuses while its marker names another sender (\`tilstand sync now --take-over\` if this copy is the one to send)`,
    );
  }
  return fresh;
}

/** The marker at HQ; undefined when there is none. Throws Conflict when it cannot be read as one. */
export async function readMarker(target: SyncTarget, site: string): Promise<SenderMarker | undefined> {
  const key = senderMarkerKey(site);
  const bytes = await getIfPresent(target, key);
  if (bytes === undefined) return undefined;
  let m: Partial<SenderMarker> | null = null;
  try {
    m = JSON.parse(bytes.toString('utf8')) as Partial<SenderMarker>;
  } catch {
    // reported below
  }
  if (m === null || typeof m !== 'object' || typeof m.sender !== 'string' || m.sender === '') {
    throw new SyncError('Conflict', `HQ's sender marker ${key} is not one (expected JSON with a "sender" id): nothing is sent; \`tilstand sync now --take-over\` rewrites it`);
  }
  return {
    format: 1,
    sender: m.sender,
    host: typeof m.host === 'string' ? m.host : '?',
    dataDir: typeof m.dataDir === 'string' ? m.dataDir : '?',
    sinceMs: typeof m.sinceMs === 'number' ? m.sinceMs : 0,
    by: m.by === 'restore' || m.by === 'take-over' ? m.by : 'first send',
  };
}

/** Writes this data directory's marker (a pointer: visible whole). */
export async function writeMarker(target: SyncTarget, site: string, m: Omit<SenderMarker, 'format' | 'host'>): Promise<SenderMarker> {
  const marker: SenderMarker = { format: 1, sender: m.sender, host: hostname(), dataDir: m.dataDir, sinceMs: m.sinceMs, by: m.by };
  await target.putPointer(senderMarkerKey(site), Buffer.from(JSON.stringify(marker, null, 2) + '\n'));
  return marker;
}

/**
 * Writes HQ's marker naming this outbox's directory, its time recorded in the outbox first
 * (`MARKER_SINCE`): a put whose answer the line lost may still have landed, and the engine's next
 * check, finding this directory's id with a time its outbox did not know, took it for a take-over
 * from outside and dropped every step and the record of what HQ holds. The engine's first send
 * and take-over, and `restore`.
 */
export async function claimMarker(outbox: Outbox, target: SyncTarget, site: string, m: Omit<SenderMarker, 'format' | 'host'>): Promise<SenderMarker> {
  outbox.db.transaction(() => {
    outbox.setState(MARKER_SINCE, String(m.sinceMs));
    outbox.setState(MARKER_UNCONFIRMED, String(m.sinceMs));
  })();
  const written = await writeMarker(target, site, m);
  outbox.setState(MARKER_UNCONFIRMED, null);
  return written;
}

/**
 * When the marker naming this directory that HQ is known to have held was written (`MARKER_SINCE`):
 * this outbox wrote it, or a check found it there. Undefined for an outbox that never had one at
 * this target — the first send, a site that synced before markers (its outbox has no
 * `MARKER_SINCE`), a new target (its constructor drops it) — or whose only write of one was not
 * seen to land (`MARKER_UNCONFIRMED`): for those an absent marker is adopted.
 */
export function markerHeldSince(outbox: Outbox): number | undefined {
  const since = outbox.getState(MARKER_SINCE);
  if (since === undefined || outbox.getState(MARKER_UNCONFIRMED) !== undefined) return undefined;
  const n = Number(since);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * The refusal when HQ no longer holds the marker this directory had there: the share not mounted
 * (a directory target then is the empty local mount point) or HQ's copy deleted. Writing the
 * marker again would send HQ's files onto this PC's own disk, or leave HQ a copy whose earlier
 * files the outbox says it has; a deliberate wipe is settled by a take-over, which sends everything.
 */
export function goneMessage(site: string, description: string, dataDir: string, sinceMs: number): string {
  const where = description.startsWith('dir:')
    ? `HQ's folder no longer holds this site's sender marker (site_${site}.db/.tilstand/sender.json), which this data directory (${dataDir}) wrote at ${new Date(sinceMs).toISOString()}: is the share mounted at ${description.slice('dir:'.length)}?`
    : `HQ (${description}) no longer holds this site's sender marker (site_${site}.db/.tilstand/sender.json), which this data directory (${dataDir}) wrote at ${new Date(sinceMs).toISOString()}: was HQ's copy deleted?`;
  // A directory target's take-over checks the mount first (ontoOwnDisk): said here, so the
  // person who reads this does not take the refusal for a fault.
  const mount = description.startsWith('dir:') ? ' (it is refused while the share is not mounted: mount it first)' : '';
  return (
    `${where} Nothing is sent to or removed at HQ; sending resumes by itself once the marker is there again. ` +
    `If HQ's copy of site ${site} was removed on purpose, run \`tilstand sync now --take-over --data ${dataDir}\`: it sends everything again${mount}`
  );
}

/** The refusal: which sender owns the prefix, since when, and what to do. */
export function conflictMessage(site: string, own: string, dataDir: string, m: SenderMarker): string {
  return (
    `HQ's site_${site}.db/ belongs to another sender: ${m.sender} on ${m.host} (${m.dataDir}), since ${new Date(m.sinceMs).toISOString()} (${m.by}); ` +
    `this data directory (${dataDir}) is sender ${own}. Nothing is sent to or removed at HQ. ` +
    `If that PC replaced this one (restored from HQ), retire this one; ` +
    `if this one is to send for site ${site}, run \`tilstand sync now --take-over --data ${dataDir}\` (the other stops at its next step)`
  );
}

/**
 * The id of the file system `path` is on (`stat`'s dev). A path that does not exist is on the file
 * system of the nearest folder above it that does: where a write there would create it.
 */
export type FileSystemOf = (path: string) => number | bigint;

export const fileSystemOf: FileSystemOf = (path) => {
  let p = resolve(path);
  // Bounded by the path's depth: each turn goes one folder up, and the root exists.
  for (let depth = p.split(/[\\/]/).length + 1; depth > 0; depth--) {
    try {
      return statSync(p, { bigint: true }).dev;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(p) === p) throw e;
      p = dirname(p);
    }
  }
  throw new Error(`no folder above ${path} exists`);
};

/**
 * Where HQ's folder was against the data directory: `apart` — on another file system (a mounted
 * share). The device numbers are kept for the message only: a network mount's may change from one
 * mount to the next, so only `apart` is compared across time. `mountRoot`: the highest folder at or
 * above HQ's folder on the same file system as it — where that file system is mounted (`/mnt/hq`
 * for a share mounted there, `/` on the system disk); a path, so a share's new device number at its
 * next mount changes nothing. Absent in a record of a version before it.
 */
interface HqFileSystem {
  apart: boolean;
  hqDevice: string;
  dataDevice: string;
  mountRoot?: string;
}

/** HQ's folder of a folder target (`dir:<path>`); undefined for S3, which has no mount. */
function hqFolder(description: string): string | undefined {
  return description.startsWith('dir:') ? description.slice('dir:'.length) : undefined;
}

/** Where HQ's folder is now; undefined for S3, or when either cannot be looked at. */
function hqFileSystemNow(description: string, dataDir: string, of: FileSystemOf): HqFileSystem | undefined {
  const folder = hqFolder(description);
  if (folder === undefined) return undefined;
  try {
    const hqDevice = String(of(folder));
    const dataDevice = String(of(dataDir));
    return { apart: hqDevice !== dataDevice, hqDevice, dataDevice, mountRoot: mountRootOf(folder, hqDevice, of) };
  } catch {
    return undefined;
  }
}

/** The highest folder at or above `folder` whose file system is `device` (`of`): where it is mounted. */
function mountRootOf(folder: string, device: string, of: FileSystemOf): string {
  let p = resolve(folder);
  // Bounded by the path's depth: each turn goes one folder up, and stops at the root.
  for (let depth = p.split(/[\\/]/).length + 1; depth > 0; depth--) {
    const up = dirname(p);
    if (up === p || String(of(up)) !== device) return p;
    p = up;
  }
  return p;
}

/** Whether folder `a` is a folder above `b` (not `b` itself). */
function isAbove(a: string, b: string): boolean {
  const rel = relative(a, b);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * Records where HQ's folder is (`HQ_FILE_SYSTEM`): called when a check sees this directory's marker
 * there. Written only when it changed (a check runs before every pointer, and each write is a sync
 * of site.db).
 */
export function noteHqFileSystem(outbox: Outbox, description: string, dataDir: string, of: FileSystemOf = fileSystemOf): void {
  const now = hqFileSystemNow(description, dataDir, of);
  if (now === undefined) return;
  const text = JSON.stringify(now);
  if (outbox.getState(HQ_FILE_SYSTEM) !== text) outbox.setState(HQ_FILE_SYSTEM, text);
}

/**
 * The refusal of a take-over onto this PC's own disk, or undefined: HQ's folder now lies on the file
 * system of a folder above where its own was mounted when this outbox last saw its marker there
 * (`mountRoot`: /mnt/hq then, / now), or it was on another file system than the data directory then
 * and is on the data directory's now. Asked when the marker is gone: the share is then most likely
 * not mounted, and a take-over would write HQ's whole copy into the empty mount point — this PC's
 * disk, which it may fill, where HQ never sees it. Undefined for S3, for a folder always on the same
 * file system (a test, the demo, one disk), and with no record (an older version).
 */
export function ontoOwnDisk(outbox: Outbox, description: string, dataDir: string, of: FileSystemOf = fileSystemOf): string | undefined {
  let was: Partial<HqFileSystem> | null = null;
  try {
    was = JSON.parse(outbox.getState(HQ_FILE_SYSTEM) ?? 'null') as Partial<HqFileSystem> | null;
  } catch {
    return undefined;
  }
  if (was === null || typeof was !== 'object') return undefined;
  const now = hqFileSystemNow(description, dataDir, of);
  if (now === undefined) return undefined;
  const folder = hqFolder(description)!;
  if (was.apart === true && !now.apart) {
    return (
      `take-over refused: HQ's folder ${folder} is now on this PC's own disk (the same file system as the data directory ${dataDir}, device ${now.dataDevice}), ` +
      `whereas it was on another file system (device ${String(was.hqDevice)}) when this site last found its sender marker there: the share is most likely not mounted (\`findmnt ${folder}\` shows what is). ` +
      `Nothing was written. Mount the share and check that HQ's copy is there; if HQ's folder really moved onto this disk on purpose, run \`tilstand sync now --take-over --hq-on-this-disk --data ${dataDir}\``
    );
  }
  // Else: HQ's folder now lies on the file system of a folder above where its own was mounted: the
  // mount is gone. Also where the data directory has a disk of its own (then HQ's empty mount point is
  // on the system disk, apart from the data directory mounted or not).
  if (typeof was.mountRoot === 'string' && now.mountRoot !== undefined && isAbove(now.mountRoot, was.mountRoot)) {
    return (
      `take-over refused: HQ's folder ${folder} is no longer on the file system mounted at ${was.mountRoot}, where it was when this site last found its sender marker there, but on the one at ${now.mountRoot}: the share is most likely not mounted (\`findmnt ${was.mountRoot}\` shows what is). ` +
      `Nothing was written. Mount the share and check that HQ's copy is there; if HQ's folder really moved there on purpose, run \`tilstand sync now --take-over --hq-on-this-disk --data ${dataDir}\``
    );
  }
  return undefined;
}

export interface TakeOverOptions {
  /** The operator says HQ's folder is on this PC's disk on purpose: `ontoOwnDisk` is not asked. */
  hqOnThisDisk?: boolean;
  /** How a path's file system is found (tests); default `fileSystemOf`. */
  fileSystemOf?: FileSystemOf;
}

/**
 * Writes HQ's marker with the sender id a data directory's outbox holds, without an engine: for
 * `sync now --take-over` on a running site, whose engine holds the sender lock and reads the marker
 * at its next planning. Undefined when the outbox has no sender id (no engine ever ran on it).
 * Refused (Conflict, nothing written) onto this PC's own disk while the marker is gone (`ontoOwnDisk`).
 */
export async function takeOverFor(outbox: Outbox, dataDir: string, site: string, target: SyncTarget, nowMs: number, o: TakeOverOptions = {}): Promise<SenderMarker | undefined> {
  const id = outbox.getState(SENDER_ID);
  if (id === undefined) return undefined;
  const refusal = o.hqOnThisDisk ? undefined : ontoOwnDisk(outbox, target.description, dataDir, o.fileSystemOf);
  if (refusal !== undefined && !(await markerPresent(target, site))) throw new SyncError('Conflict', refusal);
  return writeMarker(target, site, { sender: id, dataDir: canonicalDir(dataDir), sinceMs: nowMs, by: 'take-over' });
}

/** Whether HQ holds a marker; one that cannot be read as one is there all the same. */
async function markerPresent(target: SyncTarget, site: string): Promise<boolean> {
  try {
    return (await readMarker(target, site)) !== undefined;
  } catch (e) {
    if (isSyncError(e, 'Conflict')) return true;
    throw e;
  }
}

/** `dataDir` as the marker records it. */
export const markerDir = canonicalDir;
