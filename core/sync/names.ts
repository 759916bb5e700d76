// Names at HQ. One database per site, `site_<id>.db/`, laid out as Paimon's filesystem catalog, plus
// a hidden `.tilstand/` folder (Paimon readers ignore names that start with a dot) for what is not
// a table: the site's `contracts/`.
//
//   site_<id>.db/<table>/schema/schema-N           every schema file of the table
//   site_<id>.db/<table>/manifest/…, bucket-b/…     files of the synced snapshot and tags
//   site_<id>.db/<table>/snapshot/snapshot-N        the latest synced snapshot, alone
//   site_<id>.db/<table>/snapshot/EARLIEST, LATEST  both = N
//   site_<id>.db/<table>/tag/tag-<name>             every synced tag
//   site_<id>.db/.tilstand/contracts/…              a copy of <data>/contracts/
//   site_<id>.db/.tilstand/sender.json              which data directory sends for the site (sender.ts)
//
// Keys are relative to the target's root, '/'-separated. `checkKey` is the one gate every target
// applies before touching storage.

import { SyncError } from './errors.ts';

const SITE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function checkSiteId(site: string): string {
  if (typeof site !== 'string' || !SITE_ID.test(site)) {
    throw new SyncError('InvalidArgument', `site id '${String(site)}' must be 1–64 letters, digits, '_' or '-'`);
  }
  return site;
}

export const siteDatabase = (site: string): string => `site_${checkSiteId(site)}`;
/** `site_<id>.db/` — the only prefix a site may write under. */
export const sitePrefix = (site: string): string => `${siteDatabase(site)}.db/`;
export const tablePrefix = (site: string, table: string): string => `${sitePrefix(site)}${table}/`;
export const contractsPrefix = (site: string): string => `${sitePrefix(site)}.tilstand/contracts/`;
/** The sender marker (sender.ts): the data directory that owns the site's prefix. */
export const senderMarkerKey = (site: string): string => `${sitePrefix(site)}.tilstand/sender.json`;

const SITE_FOLDER = String.raw`site_[A-Za-z0-9][A-Za-z0-9_-]{0,63}\.db`;
const PARTITION = String.raw`[^/=]+=[^/]*`;
/** The folders at HQ a site's files lie in: its own, `.tilstand` (contracts at any depth), a table's, its layout folders, its partition and bucket folders. */
const LAID_OUT = new RegExp(
  String.raw`^${SITE_FOLDER}(/\.tilstand(/contracts(/[^/]+)*)?|/[^/.][^/]*(/(schema|snapshot|tag|manifest|statistics|index|changelog)|(/${PARTITION})*(/bucket-(\d+|postpone))?)?)?$`,
);
/**
 * Whether the folder `key` (no trailing `/`) is one a site's files lie in at HQ: where a directory
 * target follows a symbolic link (targets/directory.ts `list`). An admin links a table or a bucket
 * folder onto a disk of its own; a link elsewhere (a large tree linked inside a table's folder) is
 * no part of what a site sent, and walked, `hq pull` copied all of it.
 */
export const isSiteFolder = (key: string): boolean => LAID_OUT.test(key);

/** Tags the sync engine holds on a site table while it ships a snapshot; never shipped. */
export const HOLD_TAG_PREFIX = 'sync-';
export const holdTagName = (snapshotId: number): string => `${HOLD_TAG_PREFIX}${snapshotId}`;
const HOLD_TAG = /^sync-[1-9]\d*$/;
/**
 * Whether a tag is one the engine names (`holdTagName`: `sync-` and a snapshot id, no leading
 * zero). Not every `sync-*`: an operator's own `sync-before-upgrade` is shipped and kept like
 * any tag, where planning deletes a hold tag whose unit is not pending.
 */
export const isHoldTag = (name: string): boolean => HOLD_TAG.test(name);

/**
 * Throws InvalidArgument unless `key` is a clean relative key: no empty, `.` or `..` segment, not
 * absolute, no backslash, no control character, at most 1024 bytes.
 */
export function checkKey(key: string): string {
  const bad = (why: string) => new SyncError('InvalidArgument', `refused key '${JSON.stringify(key).slice(1, -1)}': ${why}`);
  if (typeof key !== 'string' || key.length === 0) throw bad('empty');
  if (Buffer.byteLength(key) > 1024) throw bad('longer than 1024 bytes');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(key)) throw bad('control character');
  if (key.includes('\\')) throw bad('backslash');
  if (key.startsWith('/') || /^[A-Za-z]:/.test(key)) throw bad('absolute');
  for (const seg of key.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') throw bad(`segment '${seg}'`);
  }
  return key;
}

/** A prefix for listing: '' or a clean key ending in '/'. */
export function checkPrefix(prefix: string): string {
  if (prefix === '') return prefix;
  checkKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
  return prefix;
}
