// An S3-compatible object store target (AWS SDK v3, path-style addressing, endpoint configurable:
// MinIO, Ceph, Garage, s3rver in tests). Each site writes under its own prefix with its own
// credentials; the client refuses keys outside that prefix before any request (target.ts), so
// isolation does not depend on the server's policies alone.
//
// Objects carry `x-amz-meta-sha256`; puts send Content-MD5 (the server rejects a body that does
// not match) and `head` returns the single-part ETag as the MD5 the server computed (not with
// KMS or customer keys, whose ETag is no MD5) — the engine compares both with what it sent. The
// SDK's own retries are off (maxAttempts 1): the engine retries, and it asks `head` first, so a
// PUT that completed before its connection broke is never sent again. S3 has no rename: a PUT
// becomes visible whole when it completes, which is what makes "pointer last" sufficient.

import type * as S3 from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { SyncError } from '../errors.ts';
import { checkKey, checkPrefix } from '../names.ts';
import { guardWrite, shownEndpoint, type ObjectInfo, type PutBody, type PutMeta, type SyncTarget, type TargetScope } from './target.ts';

export interface S3TargetOptions extends TargetScope {
  bucket: string;
  /** Key prefix inside the bucket ('' or ending in '/'), e.g. `hq/`. */
  root?: string;
  endpoint?: string;
  region?: string;
  accessKeyId: string;
  secretAccessKey: string;
  /**
   * Milliseconds a request may go without a byte sent or received (and a connection may take to
   * open) before it is abandoned as a Transport error and retried (default 60 s). Idle time, not
   * the whole request: an upload of a large file at a capped bandwidth keeps going.
   */
  requestTimeoutMs?: number;
}

/** `requestTimeoutMs` when not given. */
export const DEFAULT_S3_REQUEST_TIMEOUT_MS = 60_000;

function statusOf(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function wrap(op: string, key: string, e: unknown, where: string): SyncError {
  if (e instanceof SyncError) return e;
  const status = statusOf(e);
  const name = (e as Error)?.name ?? 'Error';
  // A bucket HQ does not have read "put …: not found", as if the file were missing on the site.
  if (name === 'NoSuchBucket') return new SyncError('NotFound', `${op} ${key}: ${where}: no such bucket (check the bucket the s3:// URL names)`, { cause: e });
  if (status === 404 || name === 'NotFound' || name === 'NoSuchKey') return new SyncError('NotFound', `${op} ${key}: not found`, { cause: e });
  if (name === 'BadDigest' || name === 'InvalidDigest') return new SyncError('Verification', `${op} ${key}: the server received different bytes (${name})`, { cause: e });
  // HQ answered and refused the request: a key wrong, expired or revoked, a policy without this
  // request (an S3 HEAD of a missing key is 403 without s3:ListBucket), or a clock too far off
  // (RequestTimeTooSkewed). Not the line: its own kind, reported at once (engine.ts).
  if (status === 403 || status === 401) {
    // A HEAD's answer has no body: the SDK names it Unknown, or by its status.
    const code = name === String(status) || name === 'Unknown' || name === 'UnknownError' ? '' : ` ${name}`;
    const text = (e as Error)?.message;
    const said = code !== '' && text && text !== name && text !== 'UnknownError' ? `: ${text}` : '';
    return new SyncError('AccessDenied', `${op} ${key}: ${where} refused the credentials (HTTP ${status}${code}${said})`, { cause: e });
  }
  return new SyncError('Transport', `${op} ${key} failed: ${name}${status ? ` (HTTP ${status})` : ''}: ${(e as Error)?.message ?? e}`, { cause: e });
}

/**
 * The SDK, loaded by the first S3Target rather than with this module: every site process imports
 * the sync targets, and the SDK alone is ≈ 25 MB of RSS that a site without an S3 target (the
 * default: no HQ, or a directory) should not pay.
 */
let sdk: typeof S3 | undefined;
const loadSdk = (): typeof S3 => {
  // The SDK warns on Node < 22 that its releases after January 2027 will need Node 22. The
  // release package-lock.json pins runs on Node 20; the notice is for whoever updates it
  // (core/sync/DESIGN.md), and on a site's stderr and log it read like a fault. Set to anything
  // else, the variable brings the notice back.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return (sdk ??= createRequire(import.meta.url)('@aws-sdk/client-s3') as typeof S3);
};

/**
 * An S3 target's description (`SyncTarget.description`): `s3://bucket/prefix`, and the endpoint as
 * `shownEndpoint` shows it, in parentheses, when one is given.
 */
export function s3Description(bucket: string, root: string, endpoint?: string): string {
  return `s3://${bucket}/${root}${endpoint ? ` (${shownEndpoint(endpoint)})` : ''}`;
}

export class S3Target implements SyncTarget {
  readonly description: string;
  private readonly client: S3Client;
  private readonly sdk = loadSdk();
  private readonly bucket: string;
  private readonly root: string;

  constructor(private readonly o: S3TargetOptions) {
    this.bucket = o.bucket;
    this.root = o.root ?? '';
    if (this.root !== '') checkPrefix(this.root);
    this.description = s3Description(o.bucket, this.root, o.endpoint);
    const config: S3ClientConfig = {
      forcePathStyle: true,
      region: o.region ?? 'us-east-1',
      credentials: { accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey },
      maxAttempts: 1,
      // Plain PUT bodies with Content-MD5; no aws-chunked trailers (older S3-compatible servers refuse them).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (o.endpoint) config.endpoint = o.endpoint;
    // The SDK's `requestTimeout` only logs a warning when exceeded (it abandons nothing), and by
    // default it waits for ever: a server that accepts and never answers, or a connection the
    // line dropped silently, held a step — and the sync loop, and the site's stop — for good.
    // The socket's idle timeout abandons it.
    const timeout = o.requestTimeoutMs ?? DEFAULT_S3_REQUEST_TIMEOUT_MS;
    if (!Number.isFinite(timeout) || timeout <= 0) throw new SyncError('InvalidArgument', `requestTimeoutMs: expected a positive number of milliseconds, got ${timeout}`);
    config.requestHandler = { connectionTimeout: timeout, socketTimeout: timeout } as S3ClientConfig['requestHandler'];
    this.client = new this.sdk.S3Client(config);
  }

  private full(key: string): string {
    return this.root + checkKey(key);
  }

  async put(key: string, body: PutBody, meta: PutMeta): Promise<void> {
    guardWrite(this.o, key);
    try {
      await this.client.send(
        new this.sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: this.full(key),
          Body: body,
          ContentLength: meta.size,
          ...(meta.md5 ? { ContentMD5: Buffer.from(meta.md5, 'hex').toString('base64') } : {}),
          Metadata: { sha256: meta.sha256 },
        }),
      );
    } catch (e) {
      throw wrap('put', key, e, this.description);
    }
  }

  async putPointer(key: string, bytes: Uint8Array): Promise<void> {
    guardWrite(this.o, key);
    const b = Buffer.from(bytes);
    await this.put(key, b, { size: b.length, sha256: createHash('sha256').update(b).digest('hex'), md5: createHash('md5').update(b).digest('hex') });
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    checkPrefix(prefix);
    const out: ObjectInfo[] = [];
    let token: string | undefined;
    try {
      do {
        const r = await this.client.send(new this.sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.root + prefix, ContinuationToken: token }));
        for (const c of r.Contents ?? []) {
          // A key ending in '/' is a folder placeholder ("Create folder" in a console, rclone
          // mkdir: an admin's site_<id>.db/), no file: listed, checkKey refused it and every
          // pull, restore and read of that site's tables through the cache with it.
          if (c.Key === undefined || c.Key.endsWith('/')) continue;
          out.push({ key: c.Key.slice(this.root.length), size: c.Size ?? 0 });
        }
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
    } catch (e) {
      throw wrap('list', prefix, e, this.description);
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async get(key: string): Promise<Buffer> {
    try {
      const r = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.full(key) }));
      return Buffer.from(await r.Body!.transformToByteArray());
    } catch (e) {
      throw wrap('get', key, e, this.description);
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const r = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.full(key) }));
      const etag = (r.ETag ?? '').replace(/"/g, '');
      const info: ObjectInfo = { key, size: r.ContentLength ?? 0 };
      if (r.Metadata?.sha256) info.sha256 = r.Metadata.sha256;
      // A single-part ETag is the MD5 of the bytes only without encryption or with S3's own keys
      // (SSE-S3, AES256): with KMS keys (SSE-KMS, a default encryption many buckets enforce) or
      // the customer's (SSE-C) it is not, and read as one it failed every verification for good.
      const etagIsMd5 = (r.ServerSideEncryption === undefined || r.ServerSideEncryption === 'AES256') && r.SSECustomerAlgorithm === undefined;
      if (etagIsMd5 && /^[0-9a-f]{32}$/i.test(etag)) info.md5 = etag.toLowerCase();
      return info;
    } catch (e) {
      const w = wrap('head', key, e, this.description);
      if (w.kind === 'NotFound') return undefined;
      throw w;
    }
  }

  async remove(key: string): Promise<void> {
    guardWrite(this.o, key);
    try {
      await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: this.full(key) }));
    } catch (e) {
      throw wrap('remove', key, e, this.description);
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
