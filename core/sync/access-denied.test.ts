// HQ refusing this site's credentials: an S3 that answers 403 (a key wrong, expired or revoked, a
// bucket policy) or 401. A loopback proxy in front of s3rver refuses the requests a test picks,
// and forwards the rest. The refusal is its own error kind, not Transport: health is unhealthy at
// once and says HQ refuses the credentials (naming the target, never the secret), the steps are
// still retried at backoff, and a key fixed at HQ resumes sending without a restart.

import { rmSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from './cli/sync.ts';
import { SyncEngine } from './engine.ts';
import { sitePrefix } from './names.ts';
import { S3Target } from './targets/s3.ts';
import { makeSite, startS3, writeStock, type S3Fixture } from './test-support/site-fixture.ts';
import { runCli } from '../lsm/testing/cli.ts';

const SECRET = 'S3RVER';
const cleanup: string[] = [];
let s3: S3Fixture;
let proxy: http.Server;
let endpoint: string;
/** Which requests the proxy refuses, and how: a status, or undefined to forward. */
let refuse: (method: string) => 401 | 403 | undefined = () => undefined;
const refused: string[] = [];

beforeAll(async () => {
  s3 = await startS3();
  proxy = http.createServer((req, res) => {
    const status = refuse(req.method ?? '');
    if (status !== undefined) {
      refused.push(`${req.method} ${status}`);
      req.resume();
      // A HEAD's answer has no body: the SDK sees the status alone.
      if (req.method === 'HEAD') return void res.writeHead(status, { connection: 'close' }).end();
      const code = status === 403 ? 'AccessDenied' : 'Unauthorized';
      return void res.writeHead(status, { 'content-type': 'application/xml', connection: 'close' }).end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>Access Denied</Message></Error>`);
    }
    const up = http.request({ host: '127.0.0.1', port: s3.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => proxy.close(() => r()));
  await s3.close();
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const target = (site: string) => new S3Target({ bucket: s3.bucket, endpoint, accessKeyId: 'S3RVER', secretAccessKey: SECRET, writePrefix: sitePrefix(site), requestTimeoutMs: 5_000 });

describe('S3 answers 403/401', () => {
  it('is AccessDenied, not Transport, for a PUT, a bodiless HEAD and a 401', async () => {
    const t = target('ad');
    try {
      refuse = () => 403;
      await expect(t.putPointer('site_ad.db/x', Buffer.from('x'))).rejects.toMatchObject({ kind: 'AccessDenied', message: expect.stringMatching(/^put site_ad.db\/x: s3:\/\/hq\/ \(http:\/\/127.0.0.1:\d+\) refused the credentials \(HTTP 403 AccessDenied: Access Denied\)$/) });
      await expect(t.head('site_ad.db/x')).rejects.toMatchObject({ kind: 'AccessDenied', message: expect.stringMatching(/^head site_ad.db\/x: s3:.* refused the credentials \(HTTP 403\)$/) });
      refuse = () => 401;
      await expect(t.get('site_ad.db/x')).rejects.toMatchObject({ kind: 'AccessDenied', message: expect.stringMatching(/HTTP 401/) });
    } finally {
      refuse = () => undefined;
      await t.close();
    }
  });

  it('health is unhealthy at once and says HQ refuses the credentials; retried at backoff; a fixed key resumes', async () => {
    const fx = makeSite('41', { rows: 50 });
    cleanup.push(fx.data);
    let now = 1_000_000;
    const logs: string[] = [];
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: target(fx.site), clock: () => now, retry: { baseMs: 1_000, maxMs: 60_000, jitter: 0 }, scheduledTags: null, log: (l) => logs.push(l) });
    try {
      refuse = () => 403;
      await e.enqueueSnapshotSync();
      const r = await e.runOnce();
      expect(r.failed).toBeGreaterThan(0);
      const st = e.status();
      // At once: no health window waited out (a line down would still read healthy here).
      expect(st.healthy).toBe(false);
      expect(st.problems).toEqual(['credentials']);
      expect(st.online).toBe(false);
      expect(st.lastError).toMatch(/^HQ refuses this site's credentials: s3:\/\/hq\/ \(http:\/\/127\.0\.0\.1:\d+\) has refused its (head|put|get)/);
      expect(st.lastError).toMatch(/check the site's access key/);
      // Never the secret (s3rver's secret is also its key id: neither is named).
      expect(st.lastError).not.toContain(SECRET);
      // Logged once per kind of request, not per retry.
      const refusals = () => logs.filter((l) => l.includes('refuses this site')).length;
      const once = refusals();
      expect(once).toBeGreaterThan(0);
      // `sync status` from the outbox alone (another process) says the same.
      const out = await runCli(runSync, ['status', '--data', fx.data]);
      expect(out.out, out.err).toMatch(/health: +STALLED/);
      expect(out.out).toMatch(/HQ refuses this site's credentials/);
      // Still retried at backoff: the steps stay pending with a next attempt, not cancelled.
      const pending = e.outbox.rows().filter((x) => x.state === 'pending');
      expect(pending.length).toBeGreaterThan(0);
      expect(e.outbox.rows().filter((x) => x.state === 'cancelled')).toEqual([]);
      const failedRows = pending.filter((x) => x.attempts > 0);
      expect(failedRows.length).toBeGreaterThan(0);
      expect(Math.min(...failedRows.map((x) => x.next_attempt_ms))).toBeGreaterThan(now);
      // Again, still refused: one log line per kind, not per attempt.
      now += 2_000;
      await e.runOnce();
      expect(e.status().healthy).toBe(false);
      expect(refusals()).toBe(once);

      // HQ's key is fixed: the retries go through, health recovers without a restart.
      refuse = () => undefined;
      for (let i = 0; i < 20 && e.status().pendingItems > 0; i++) {
        now += 61_000;
        await e.runOnce();
      }
      const after = e.status();
      expect(after.pendingItems).toBe(0);
      expect(after.healthy).toBe(true);
      expect(after.problems).toEqual([]);
      expect(after.lastError).toBeNull();
      expect(e.outbox.getState('accessDenied')).toBeUndefined();
    } finally {
      refuse = () => undefined;
      await e.close();
    }
  });

  it('a policy that refuses only deletes stays reported while puts go through (no flapping)', async () => {
    const fx = makeSite('42', { rows: 50 });
    cleanup.push(fx.data);
    let now = 2_000_000;
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: target(fx.site), clock: () => now, retry: { baseMs: 1_000, maxMs: 1_000, jitter: 0 }, scheduledTags: null });
    try {
      refuse = (m) => (m === 'DELETE' ? 403 : undefined);
      await e.syncNow(1);
      // The first snapshot has nothing to prune; the second's prune removes the first's JSON.
      for (let round = 0; round < 3; round++) {
        writeStock(fx, 100 + round * 10, 110 + round * 10, 2 + round);
        now += 61_000;
        await e.enqueueSnapshotSync();
        for (let i = 0; i < 3; i++) {
          now += 2_000;
          await e.runOnce();
          // Puts went through in between; the refusal of deletes is still said.
          const st = e.status();
          expect(st.healthy, `round ${round}.${i}`).toBe(false);
          expect(st.lastError).toMatch(/has refused its remove requests/);
        }
      }
      expect(refused.some((x) => x.startsWith('DELETE 403'))).toBe(true);
      refuse = () => undefined;
      for (let i = 0; i < 10 && e.status().pendingItems > 0; i++) {
        now += 2_000;
        await e.runOnce();
      }
      expect(e.status()).toMatchObject({ pendingItems: 0, healthy: true, lastError: null });
    } finally {
      refuse = () => undefined;
      await e.close();
    }
  });
});
