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

import { randomUUID } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { SyncError } from './errors.ts';
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
  return (
    `${where} Nothing is sent to or removed at HQ; sending resumes by itself once the marker is there again. ` +
    `If HQ's copy of site ${site} was removed on purpose, run \`tilstand sync now --take-over --data ${dataDir}\`: it sends everything again`
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
 * Writes HQ's marker with the sender id a data directory's outbox holds, without an engine: for
 * `sync now --take-over` on a running site, whose engine holds the sender lock and reads the marker
 * at its next planning. Undefined when the outbox has no sender id (no engine ever ran on it).
 */
export async function takeOverFor(outbox: Outbox, dataDir: string, site: string, target: SyncTarget, nowMs: number): Promise<SenderMarker | undefined> {
  const id = outbox.getState(SENDER_ID);
  if (id === undefined) return undefined;
  return writeMarker(target, site, { sender: id, dataDir: canonicalDir(dataDir), sinceMs: nowMs, by: 'take-over' });
}

/** `dataDir` as the marker records it. */
export const markerDir = canonicalDir;
