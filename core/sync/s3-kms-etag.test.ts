// A bucket that encrypts with KMS keys (SSE-KMS: a default encryption many organisations enforce)
// or with the customer's key (SSE-C) answers an ETag that is not the MD5 of the object's bytes
// (AWS S3 docs, "Checking object integrity"). The target took every single-part ETag for an MD5,
// so every put and pointer failed verification for good: nothing ever reached HQ whole. The test
// puts an HTTP proxy in front of the tests' S3 that answers as such a bucket does.

import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SyncEngine } from './engine.ts';
import { sitePrefix } from './names.ts';
import { S3Target } from './targets/s3.ts';
import { makeSite, startS3, type S3Fixture } from './test-support/site-fixture.ts';

let s3: S3Fixture;
let proxy: http.Server;
let endpoint: string;
const cleanup: string[] = [];

beforeAll(async () => {
  s3 = await startS3();
  // Forwards every request; each answer says SSE-KMS and carries an ETag that is not the body's MD5.
  proxy = http.createServer((req, res) => {
    const up = http.request({ host: '127.0.0.1', port: s3.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      const headers = { ...r.headers };
      if (typeof headers.etag === 'string') {
        headers.etag = `"${createHash('md5').update(`kms:${headers.etag}`).digest('hex')}"`;
        headers['x-amz-server-side-encryption'] = 'aws:kms';
        headers['x-amz-server-side-encryption-aws-kms-key-id'] = 'arn:aws:kms:eu-north-1:111122223333:key/test';
      }
      res.writeHead(r.statusCode ?? 500, headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => proxy.close(r));
  await s3.close();
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('an S3 bucket encrypted with KMS keys (its ETag is not an MD5)', () => {
  it('head does not report the ETag as the MD5; the sha256 written with the object still verifies it', async () => {
    const t = new S3Target({ bucket: s3.bucket, endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', writePrefix: 'site_k.db/' });
    try {
      const body = Buffer.from('{"id":1}\n');
      await t.putPointer('site_k.db/x/snapshot/snapshot-1', body);
      const info = await t.head('site_k.db/x/snapshot/snapshot-1');
      expect(info?.md5).toBeUndefined();
      expect(info).toMatchObject({ size: body.length, sha256: createHash('sha256').update(body).digest('hex') });
    } finally {
      await t.close();
    }
  });

  it('a site syncs to it: every step verified and done, nothing sent twice', async () => {
    const fx = makeSite('71', { rows: 50 });
    cleanup.push(fx.data);
    const target = new S3Target({ bucket: s3.bucket, endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', writePrefix: sitePrefix(fx.site) });
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target, retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null });
    try {
      const r = await e.syncNow(5);
      expect(r.status.lastError).toBeNull();
      expect(r.status.pendingItems).toBe(0);
      expect(r.plan.items).toBeGreaterThan(0);
      // Each key PUT once: a head that mismatched sent the file again at every attempt.
      const twice = [...s3.puts].filter(([k, n]) => k.startsWith(sitePrefix(fx.site)) && !k.endsWith('/sender.json') && n > 1);
      expect(twice).toEqual([]);
    } finally {
      await e.close();
      await target.close();
    }
  }, 30_000);
});
