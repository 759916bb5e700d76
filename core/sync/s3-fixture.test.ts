// The tests' S3 (s3rver behind site-fixture.ts's startS3) stores a PUT whole or not at all, as S3
// does: the fault suites cut PUTs mid-body, and a torn object at HQ is a state S3 never shows.

import { createHash } from 'node:crypto';
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Target } from './targets/s3.ts';
import { startS3, type S3Fixture } from './test-support/site-fixture.ts';

let s3: S3Fixture;
let target: S3Target;
beforeAll(async () => {
  s3 = await startS3();
  target = new S3Target({ bucket: s3.bucket, endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', writePrefix: 'site_x.db/' });
});
afterAll(async () => {
  await target.close();
  await s3.close();
});

/** A raw PUT that sends `sent` of the body's bytes then closes the connection; resolves on the answer or the close. */
function rawPut(key: string, body: Buffer, sent: number, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect(s3.port, '127.0.0.1');
    let answer = '';
    c.on('data', (b) => (answer += b.toString('latin1')));
    c.on('error', reject);
    c.on('close', () => resolve(answer));
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    c.write(`PUT /${s3.bucket}/${key} HTTP/1.1\r\nHost: 127.0.0.1:${s3.port}\r\nContent-Length: ${body.length}\r\n${extra}Connection: close\r\n\r\n`);
    c.write(body.subarray(0, sent));
    if (sent < body.length) setTimeout(() => c.destroy(), 50);
  });
}

async function settled(key: string, want: string | undefined): Promise<string | undefined> {
  // The server learns of the cut a moment after the client: give it time, then read.
  await new Promise((r) => setTimeout(r, 200));
  try {
    return (await target.get(key)).toString();
  } catch {
    return want === undefined ? undefined : 'missing';
  }
}

describe('the tests S3 stores a PUT whole or not at all', () => {
  it('a PUT cut mid-body leaves the object it would have replaced', async () => {
    await target.putPointer('site_x.db/marker.json', Buffer.from('{"sender":"a"}\n'));
    await rawPut('site_x.db/marker.json', Buffer.from('{"sender":"b","more":"x".padEnd(200)}'), 10);
    expect(await settled('site_x.db/marker.json', '')).toBe('{"sender":"a"}\n');
  });

  it('a PUT cut mid-body of a new key stores nothing', async () => {
    await rawPut('site_x.db/new.json', Buffer.alloc(300, 'n'), 100);
    expect(await settled('site_x.db/new.json', undefined)).toBeUndefined();
    expect((await target.list('site_x.db/')).map((o) => o.key)).not.toContain('site_x.db/new.json');
  });

  it('a body that does not match its Content-MD5 is refused (BadDigest) and not stored', async () => {
    await target.putPointer('site_x.db/md5.json', Buffer.from('old'));
    const answer = await rawPut('site_x.db/md5.json', Buffer.from('new'), 3, { 'Content-MD5': Buffer.alloc(16).toString('base64') });
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toContain('BadDigest');
    expect(await settled('site_x.db/md5.json', '')).toBe('old');
  });

  it('a whole PUT is stored with its MD5 as the ETag', async () => {
    const answer = await rawPut('site_x.db/whole.json', Buffer.from('whole'), 5);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(await settled('site_x.db/whole.json', '')).toBe('whole');
    expect((await target.head('site_x.db/whole.json'))?.md5).toBe(createHash('md5').update('whole').digest('hex'));
  });
});
