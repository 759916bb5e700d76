// Test support for sync's health tests (outage-health, stuck-pointer, stuck-step, stuck-file,
// behind-carry, rollback-replan, directory-permission): a site, a directory HQ the test may put a
// fault in front of, and engines on a settable clock with a 15-minute health window. Not imported
// by production code.

import { join } from 'node:path';
import { statusOf, SyncEngine, type SyncStatus } from '../engine.ts';
import { sitePrefix } from '../names.ts';
import { existingOutbox, openOutboxDb } from '../outbox.ts';
import { DirectoryTarget } from '../targets/directory.ts';
import type { SyncTarget } from '../targets/target.ts';
import { makeSite, tempDir, writeStock, type SiteFixture } from './site-fixture.ts';

export const MINUTE = 60_000;
export const WINDOW = 15 * MINUTE;

/** A request a faulty HQ sees: `fault` may throw for it (a line down, a refusal) before HQ has it. */
export type HqRequest = 'put' | 'putPointer' | 'list' | 'get' | 'head' | 'remove';

/** `inner` with `fault(request, key)` called before each request; what it throws is the request's error. */
export function faultyTarget(inner: SyncTarget, fault: (request: HqRequest, key: string) => void): SyncTarget {
  return {
    description: inner.description,
    put: async (k, b, m) => (fault('put', k), inner.put(k, b, m)),
    putPointer: async (k, b) => (fault('putPointer', k), inner.putPointer(k, b)),
    list: async (p) => (fault('list', p), inner.list(p)),
    get: async (k) => (fault('get', k), inner.get(k)),
    head: async (k) => (fault('head', k), inner.head(k)),
    remove: async (k) => (fault('remove', k), inner.remove(k)),
    close: async () => {},
  };
}

export interface HealthSite<T extends SyncTarget> {
  fx: SiteFixture;
  /** The directory HQ writes to, for the site only (`writePrefix`). */
  inner: DirectoryTarget;
  target: T;
  clock: { now: number };
  /** A new engine on the site (a restart when the previous one was closed); `log` gets its log lines. */
  open(log?: (line: string) => void): SyncEngine;
}

/**
 * A site (`rows` rows of stock) and a directory HQ, both in temporary folders pushed to `cleanup`;
 * `target` puts what the test controls in front of the directory (default: the directory itself).
 * Engines: the clock at 2026-12-05 08:00 UTC, retries from 1 s up to a minute without jitter, no
 * scheduled tags (hourly tags are units nothing supersedes, and would stall health by
 * themselves), a 15-minute health window.
 */
export function healthSite<T extends SyncTarget = DirectoryTarget>(id: string, cleanup: string[], o: { rows?: number; target?: (inner: DirectoryTarget, fx: SiteFixture) => T } = {}): HealthSite<T> {
  const fx = makeSite(id, { rows: o.rows ?? 30 });
  const hq = tempDir('hq');
  cleanup.push(fx.data, hq);
  const inner = new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) });
  const target = o.target ? o.target(inner, fx) : (inner as unknown as T);
  const clock = { now: Date.UTC(2026, 11, 5, 8, 0, 0) };
  const open = (log?: (line: string) => void) =>
    new SyncEngine({ dataDir: fx.data, site: fx.site, target, clock: () => clock.now, random: () => 0, retry: { baseMs: 1000, maxMs: MINUTE, jitter: 0 }, scheduledTags: null, healthWindowMs: WINDOW, ...(log ? { log } : {}) });
  return { fx, inner, target, clock, open };
}

/** Runs what is due until a round does nothing (bounded). */
export async function drain(e: SyncEngine): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const r = await e.runOnce();
    if (r.done + r.failed === 0) break;
  }
}

/** One simulated minute: stock commits (row 30 + n), the engine plans and runs what is due. */
export async function stockMinute(e: SyncEngine, fx: SiteFixture, clock: { now: number }, n: number): Promise<SyncStatus> {
  clock.now += MINUTE;
  writeStock(fx, 30 + n, 31 + n, 2 + n);
  await e.enqueueSnapshotSync();
  await drain(e);
  return e.status();
}

/** `tilstand sync status`: the outbox read by another, read-only connection. */
export function statusFromOutbox(fx: SiteFixture, nowMs: number): SyncStatus {
  const db = openOutboxDb(join(fx.data, 'site.db'), true);
  try {
    return statusOf(existingOutbox(db)!, nowMs, WINDOW);
  } finally {
    db.close();
  }
}

export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
