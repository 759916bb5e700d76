// HQ refusing this site's credentials (AccessDenied: S3's HTTP 403/401 — a key wrong, expired or
// revoked, a bucket policy without the request, a clock too far off; a directory HQ whose folder
// the site's user may not write, or mounted read-only). Retried as the line is, but
// not weather: waiting mends nothing, so status() is unhealthy from the first refusal and says so
// (DESIGN.md "Retry, backoff, health"). Kept per kind of request in `sync_state` `accessDenied`
// (for `sync status` and a restart) and cleared when that kind of request goes through again: a
// policy that refuses only deletes (prune, remove) stays reported while puts go through, instead
// of being cleared by each put and set again by the next prune.

import { isSyncError } from './errors.ts';
import type { Outbox } from './outbox.ts';
import type { ObjectInfo, PutBody, PutMeta, SyncTarget } from './targets/target.ts';

/** `sync_state` key: the kinds of request HQ refuses, each with since when and the last refusal. */
export const ACCESS_DENIED = 'accessDenied';

/** A kind of request (`putPointer` is a put: the same permission). */
export type AccessOp = 'put' | 'get' | 'head' | 'list' | 'remove';

export interface Denial {
  sinceMs: number;
  /** The last refusal, as the step's error reads (`SyncError: …`). */
  error: string;
}

/** The refusals kept in the outbox (an unreadable value reads as none). */
export function accessDenials(outbox: Outbox): Partial<Record<AccessOp, Denial>> {
  const v = outbox.getState(ACCESS_DENIED);
  if (v === undefined) return {};
  try {
    return JSON.parse(v) as Partial<Record<AccessOp, Denial>>;
  } catch {
    return {};
  }
}

/**
 * Whether a target's description is a directory's (targets/directory.ts: `dir:<path>`): its
 * refusals are the folder's permissions for the site's user, not an access key.
 */
const isDirectory = (description: string): boolean => description.startsWith('dir:');

const errorText = (e: unknown): string => (e instanceof Error ? `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}` : String(e));

/**
 * The engine's target: every request goes to `target`, and what HQ says of this site's
 * credentials is noted on the way (`accessDenied`), whoever made the request (a step, planning's
 * HEAD, the sender marker's read).
 */
export class WatchedTarget implements SyncTarget {
  readonly description: string;
  private denied: Partial<Record<AccessOp, Denial>>;

  constructor(
    private readonly target: SyncTarget,
    private readonly outbox: Outbox,
    private readonly clock: () => number,
    private readonly log: (line: string) => void,
  ) {
    this.description = target.description;
    this.denied = accessDenials(outbox);
  }

  async put(key: string, body: PutBody, meta: PutMeta): Promise<void> {
    try {
      await this.target.put(key, body, meta);
    } catch (e) {
      throw this.failed('put', e);
    }
    this.ok('put');
  }

  async putPointer(key: string, bytes: Uint8Array): Promise<void> {
    try {
      await this.target.putPointer(key, bytes);
    } catch (e) {
      throw this.failed('put', e);
    }
    this.ok('put');
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    let r: ObjectInfo[];
    try {
      r = await this.target.list(prefix);
    } catch (e) {
      throw this.failed('list', e);
    }
    this.ok('list');
    return r;
  }

  async get(key: string): Promise<Buffer> {
    let r: Buffer;
    try {
      r = await this.target.get(key);
    } catch (e) {
      // NotFound is an answer: the request was allowed.
      if (isSyncError(e, 'NotFound')) this.ok('get');
      throw this.failed('get', e);
    }
    this.ok('get');
    return r;
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    let r: ObjectInfo | undefined;
    try {
      r = await this.target.head(key);
    } catch (e) {
      throw this.failed('head', e);
    }
    this.ok('head');
    return r;
  }

  async remove(key: string): Promise<void> {
    try {
      await this.target.remove(key);
    } catch (e) {
      throw this.failed('remove', e);
    }
    this.ok('remove');
  }

  close(): Promise<void> {
    return this.target.close();
  }

  /** Whether HQ refuses some kind of request now. */
  get refusing(): boolean {
    return Object.keys(this.denied).length > 0;
  }

  private ok(op: AccessOp): void {
    if (this.denied[op] === undefined) return;
    delete this.denied[op];
    this.save();
    this.log(`sync: ${this.description} accepts this site's ${op} requests again`);
  }

  private failed(op: AccessOp, e: unknown): unknown {
    if (!isSyncError(e, 'AccessDenied')) return e;
    const was = this.denied[op];
    const error = errorText(e);
    if (was?.error === error) return e;
    // Logged once per kind of request, not at every retry: the line would bury the log's other errors.
    if (was === undefined) this.log(`sync: ${this.description} refuses this site's ${op} requests (${isDirectory(this.description) ? "check that the site's user may write the folder" : "check its access key and HQ's policy"}; retried): ${error}`);
    this.denied[op] = { sinceMs: Math.min(was?.sinceMs ?? Infinity, this.clock()), error };
    this.save();
    return e;
  }

  private save(): void {
    this.outbox.setState(ACCESS_DENIED, Object.keys(this.denied).length === 0 ? null : JSON.stringify(this.denied));
  }
}

/**
 * status()'s sentence for the refusals kept in the outbox, or undefined when there are none. It
 * names the target (never a secret) and what to check.
 */
export function accessDeniedMessage(outbox: Outbox): { message: string; errors: Set<string> } | undefined {
  const denied = Object.entries(accessDenials(outbox)) as Array<[AccessOp, Denial]>;
  if (denied.length === 0) return undefined;
  denied.sort(([, a], [, b]) => a.sinceMs - b.sinceMs);
  const target = outbox.getState('target') ?? 'HQ';
  const since = new Date(denied[0]![1].sinceMs).toISOString();
  // Each error names the target too (s3.ts): said once, at the start.
  const last = denied.map(([op, d]) => `${op}: ${d.error.replace(/^SyncError: /, '').replace(`${target} refused the credentials `, 'refused ')}`).join('; ');
  if (isDirectory(target)) {
    return {
      message:
        `HQ's folder refuses this site's writes: ${target} has refused its ${denied.map(([op]) => op).join(', ')} requests since ${since} (${last}); ` +
        `check that the folder is writable for the user the site runs as and not mounted read-only (under systemd also ReadWritePaths: docs/operations.md, "Connecting to headquarters") — retried at backoff, sending resumes once it is`,
      errors: new Set(denied.map(([, d]) => d.error)),
    };
  }
  const clock = denied.some(([, d]) => d.error.includes('RequestTimeTooSkewed')) ? "; HQ says this PC's clock is too far off: set it right" : '';
  return {
    message:
      `HQ refuses this site's credentials: ${target} has refused its ${denied.map(([op]) => op).join(', ')} requests since ${since} (${last})${clock}; ` +
      `check the site's access key (wrong, expired or revoked) and HQ's policy for the site's prefix — retried at backoff, sending resumes once HQ accepts them`,
    errors: new Set(denied.map(([, d]) => d.error)),
  };
}
