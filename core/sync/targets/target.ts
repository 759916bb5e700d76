// The sync target contract (DESIGN.md "Sync target"): where a site's files go at HQ. One
// interface, one file per kind of storage (directory.ts, s3.ts).
//
//   put(key, body, {size, sha256})  an immutable, uniquely named file. Re-putting a key whose
//                                   object has the same bytes is a no-op by construction.
//   putPointer(key, bytes)          a small file that becomes visible whole (snapshot/tag JSON,
//                                   hints). Pointers are written LAST, after what they refer to.
//   list(prefix) / get / head       reading; `head` reports size and SHA-256 (a directory
//                                   re-reads the file; S3 returns the metadata written with it
//                                   and its ETag, the MD5 the server computed of what it got).
//   remove(key)                     only for superseded snapshot JSON at HQ (one snapshot per table)
//                                   and the JSON of run tags the site expired (engine.ts).
//
// Scope: a target opened for a site carries `writePrefix = site_<id>.db/`; every write and remove
// outside it is refused on the client before any request (Forbidden). Every key passes
// `checkKey` (no `..`, absolute paths, backslashes or control characters).

import type { Readable } from 'node:stream';
import { isSyncError, SyncError } from '../errors.ts';
import { checkKey } from '../names.ts';

export interface ObjectInfo {
  key: string;
  size: number;
  /** Hex SHA-256 when the target knows it (a directory always; S3 when written by this code). */
  sha256?: string;
  /** Hex MD5 of the bytes the server received, when the target reports one (S3 single-part ETag). */
  md5?: string;
}

export interface PutMeta {
  size: number;
  /** Hex SHA-256 of the body. */
  sha256: string;
  /** Hex MD5 of the body (lets S3 verify the ETag). */
  md5?: string;
}

export type PutBody = Uint8Array | Readable;

export interface SyncTarget {
  /** For messages: `dir:/mnt/hq` or `s3://bucket/prefix`. */
  readonly description: string;
  put(key: string, body: PutBody, meta: PutMeta): Promise<void>;
  putPointer(key: string, bytes: Uint8Array): Promise<void>;
  /** Every object whose key starts with `prefix`, with its size. Hidden temporary files and folder placeholders (a key ending in '/') are left out. */
  list(prefix: string): Promise<ObjectInfo[]>;
  /** NotFound when absent. */
  get(key: string): Promise<Buffer>;
  /** undefined when absent. */
  head(key: string): Promise<ObjectInfo | undefined>;
  remove(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface TargetScope {
  /** Writes and removes must be under this prefix (e.g. `site_7.db/`). Undefined: no writes at all. */
  writePrefix?: string;
}

/** The client-side prefix guard every target applies to writes. */
/** `target.get(key)`, or undefined when HQ has no such key (NotFound); any other error propagates. */
export async function getIfPresent(target: SyncTarget, key: string): Promise<Buffer | undefined> {
  try {
    return await target.get(key);
  } catch (e) {
    if (isSyncError(e, 'NotFound')) return undefined;
    throw e;
  }
}

export function guardWrite(scope: TargetScope, key: string): string {
  checkKey(key);
  if (scope.writePrefix === undefined) throw new SyncError('Forbidden', `target is read-only: refused write of '${key}'`);
  if (!key.startsWith(scope.writePrefix)) throw new SyncError('Forbidden', `key '${key}' is outside this site's prefix '${scope.writePrefix}'`);
  return key;
}

/** An endpoint's user info (`user:pass@`), with or without a scheme before it. */
const ENDPOINT_USER_INFO = /^((?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/)?[^/?#\s]*@/;

/**
 * An endpoint as the description shows it: without user info, query or fragment — a URL copied
 * with a password or a signed query would be printed in status, logs and errors, and kept in
 * site.db. Otherwise as written, not normalised (`https://host:443` stays): the outbox compares the
 * description with the one it kept, and another text reads as another target (everything resent).
 */
export function shownEndpoint(endpoint: string): string {
  return endpoint.replace(ENDPOINT_USER_INFO, '$1').replace(/[?#][^]*$/, '');
}

/**
 * A description an older version kept (sync_state `target`) as this one writes it: the endpoint
 * in its parentheses without user info, query or fragment. Others unchanged.
 */
export function shownDescription(description: string): string {
  const m = /^(s3:\/\/[^ ]*) \(([^]*)\)$/.exec(description);
  return m === null ? description : `${m[1]} (${shownEndpoint(m[2]!)})`;
}
