// Consumers (Paimon's ConsumerManager): `consumer/consumer-<id>` holds `{"nextSnapshot": N}`, the
// first snapshot the named reader has not yet acknowledged. A consumer protects snapshot N and
// every later one from expiration, so a restarted reader resumes where it stopped. With
// `consumer.expiration-time`, a consumer file not updated for that long (by modification time,
// against the table clock) is removed at the next expiration and protects nothing from then on.
//
// Files are replaced atomically (temporary file + rename), never edited in place.

import { join } from 'node:path';
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
}

export function deleteConsumer(table: Table, id: string): void {
  const path = consumerFile(table, id);
  if (!table.fileIO.exists(path)) throw notFound(`consumer '${id}' does not exist`);
  table.fileIO.remove(path);
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
 * For expiration (REQUIRES the writer lock): removes consumers older than
 * `consumer.expiration-time`, then returns the smallest `nextSnapshot` of the rest (Infinity
 * when there is none). Snapshots at or after it must not expire.
 */
export function minConsumerNextSnapshot(table: Table, nowMs: number): number {
  const expiration = changelogOptions(table.schema.options).consumerExpirationMs;
  let min = Infinity;
  const dir = consumerDir(table);
  for (const c of listConsumers(table)) {
    if (expiration !== undefined && c.modifiedMs < nowMs - expiration) {
      table.fileIO.remove(`${dir}/${PREFIX}${c.id}`);
      continue;
    }
    if (c.nextSnapshot < min) min = c.nextSnapshot;
  }
  return min;
}
