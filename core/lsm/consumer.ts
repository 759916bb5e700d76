// Consumers (Paimon's ConsumerManager): `consumer/consumer-<id>` holds `{"nextSnapshot": N}`, the
// first snapshot the named reader has not yet acknowledged. A consumer protects snapshot N and
// every later one from expiration, so a restarted reader resumes where it stopped. With
// `consumer.expiration-time`, a consumer file not updated for that long is removed at the next
// expiration and protects nothing from then on.
//
// How long a file went without an update is measured on the table's clock (an injected one: a
// test, a replay's simulated clock), as every other time of the table is. Paimon compares the
// file's modification time with the wall clock (ConsumerManager.expire, called with
// LocalDateTime.now() minus the expiration time), and a file Java wrote says nothing else: it
// holds only `nextSnapshot`. So a file's last update, on the table's clock, is the clock's time
// when this process wrote it, and for a file this process did not write (another process, Java
// included, or before this process started) its age by its modification time on the wall clock,
// taken when this process first sees that version of it (`modifiedOnClock`); from then on it ages
// with the table's clock. With the wall clock as the table's clock (a site) that is the
// modification time itself, as in Paimon. Before, the modification time (wall clock) was compared
// with the table's clock: a clock ahead of the wall expired a consumer at its first expiration
// (its reader then found its snapshots gone), one behind never expired any.
//
// Files are replaced atomically (temporary file + rename), never edited in place.

import { join, resolve } from 'node:path';
import { changelogOptions } from './changelog-options.ts';
import { corruption, invalidArgument, notFound } from './errors.ts';
import { checkName } from './partition-path.ts';
import type { Table } from './table.ts';

const PREFIX = 'consumer-';

export interface ConsumerInfo {
  id: string;
  nextSnapshot: number;
  /** Last update, epoch ms (file modification time). */
  modifiedMs: number;
}

export function consumerDir(table: Table): string {
  return join(table.paths.root, 'consumer');
}

function consumerFile(table: Table, id: string): string {
  checkConsumerId(id);
  return join(consumerDir(table), `${PREFIX}${id}`);
}

export function checkConsumerId(id: string): void {
  if (typeof id !== 'string' || id.length === 0) throw invalidArgument('a consumer needs a non-empty id');
  checkName('consumer' as 'tag', id);
}

function parse(text: string, path: string): number {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw corruption(path, `consumer file is not JSON: ${(e as Error).message}`, e);
  }
  const n = (j as { nextSnapshot?: unknown } | null)?.nextSnapshot;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw corruption(path, `consumer file has no valid nextSnapshot: ${text.slice(0, 80)}`);
  return n;
}

/**
 * The last update of the consumer files this process saw, on a table clock: per clock function,
 * per consumer directory (resolved), per consumer id, for one version of the file (its identity:
 * inode, size and modification time; a rewrite renames a new file over it).
 */
const seen = new WeakMap<() => number, Map<string, Map<string, { identity: string; modifiedMs: number }>>>();

function seenIn(table: Table): Map<string, { identity: string; modifiedMs: number }> {
  let byDir = seen.get(table.clock);
  if (!byDir) seen.set(table.clock, (byDir = new Map()));
  const dir = resolve(consumerDir(table));
  let byId = byDir.get(dir);
  if (!byId) byDir.set(dir, (byId = new Map()));
  return byId;
}

/** One version of a file (undefined when it is gone) and its modification time (wall clock). */
function identityOf(table: Table, path: string): { identity: string; mtimeMs: number } | undefined {
  if (table.fileIO.stat) {
    const s = table.fileIO.stat(path);
    return s === undefined ? undefined : { identity: `${s.ino}:${s.size}:${s.mtimeMs}`, mtimeMs: s.mtimeMs };
  }
  try {
    const mtimeMs = table.fileIO.mtimeMs(path);
    return { identity: `${table.fileIO.size(path)}:${mtimeMs}`, mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * When the consumer file `id` (of the version `file`) was last updated, on the table's clock: when
 * this process wrote it, else its wall-clock age when first seen, taken back from the table's
 * time then, `nowMs` (the header).
 */
function modifiedOnClock(table: Table, id: string, file: { identity: string; mtimeMs: number }, nowMs: number): number {
  const byId = seenIn(table);
  const known = byId.get(id);
  if (known !== undefined && known.identity === file.identity) return known.modifiedMs;
  const modifiedMs = nowMs - (Date.now() - file.mtimeMs);
  byId.set(id, { identity: file.identity, modifiedMs });
  return modifiedMs;
}

/** The consumer's next snapshot, or undefined when it is not registered. */
export function readConsumer(table: Table, id: string): number | undefined {
  const path = consumerFile(table, id);
  const bytes = table.fileIO.readFileIfExists(path);
  return bytes === undefined ? undefined : parse(bytes.toString('utf8'), path);
}

/** Records the consumer's position (Jackson-style JSON, as Paimon writes it). */
export function writeConsumer(table: Table, id: string, nextSnapshot: number): void {
  if (!Number.isSafeInteger(nextSnapshot) || nextSnapshot < 1) throw invalidArgument(`consumer position must be a snapshot id ≥ 1, got ${nextSnapshot}`);
  const path = consumerFile(table, id);
  table.fileIO.mkdirs(consumerDir(table));
  table.fileIO.replaceAtomic(path, Buffer.from(`{\n  "nextSnapshot" : ${nextSnapshot}\n}`));
  // Updated now on the table's clock (what consumer.expiration-time is measured by).
  const file = identityOf(table, path);
  if (file !== undefined) seenIn(table).set(id, { identity: file.identity, modifiedMs: table.clock() });
}

export function deleteConsumer(table: Table, id: string): void {
  const path = consumerFile(table, id);
  if (!table.fileIO.exists(path)) throw notFound(`consumer '${id}' does not exist`);
  table.fileIO.remove(path);
  seenIn(table).delete(id);
}

export function listConsumers(table: Table): ConsumerInfo[] {
  const out: ConsumerInfo[] = [];
  const dir = consumerDir(table);
  for (const name of table.fileIO.list(dir)) {
    if (!name.startsWith(PREFIX)) continue;
    const path = `${dir}/${name}`;
    const bytes = table.fileIO.readFileIfExists(path);
    if (bytes === undefined) continue; // removed while listing
    let modifiedMs: number;
    try {
      modifiedMs = table.fileIO.mtimeMs(path);
    } catch {
      continue;
    }
    out.push({ id: name.slice(PREFIX.length), nextSnapshot: parse(bytes.toString('utf8'), path), modifiedMs });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/**
 * For expiration (REQUIRES the writer lock): removes consumers not updated for
 * `consumer.expiration-time` on the table's clock (`nowMs` is its time; see the header), then
 * returns the smallest `nextSnapshot` of the rest (Infinity when there is none). Snapshots at or
 * after it must not expire.
 */
export function minConsumerNextSnapshot(table: Table, nowMs: number): number {
  const expiration = changelogOptions(table.schema.options).consumerExpirationMs;
  let min = Infinity;
  const dir = consumerDir(table);
  const byId = seenIn(table);
  const listed = new Set<string>();
  for (const name of table.fileIO.list(dir)) {
    if (!name.startsWith(PREFIX)) continue;
    const id = name.slice(PREFIX.length);
    const path = `${dir}/${name}`;
    const file = identityOf(table, path);
    if (file === undefined) continue; // removed while listing
    const bytes = table.fileIO.readFileIfExists(path);
    if (bytes === undefined) continue;
    listed.add(id);
    // As Paimon: removed when its last update is before now minus the expiration time.
    if (expiration !== undefined && modifiedOnClock(table, id, file, nowMs) < nowMs - expiration) {
      table.fileIO.remove(path);
      byId.delete(id);
      continue;
    }
    const next = parse(bytes.toString('utf8'), path);
    if (next < min) min = next;
  }
  for (const id of [...byId.keys()]) if (!listed.has(id)) byId.delete(id); // removed elsewhere
  return min;
}
