// An S3 endpoint that accepts a connection and never answers (a hung proxy, a connection the line
// dropped silently): the request is abandoned as a Transport error after its idle timeout, and the
// engine retries it, instead of one step holding the sync loop and the site's stop for ever.

import * as net from 'node:net';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncEngine } from './engine.ts';
import { sitePrefix } from './names.ts';
import { DEFAULT_S3_REQUEST_TIMEOUT_MS, S3Target } from './targets/s3.ts';
import { makeSite } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
const servers: net.Server[] = [];
const sockets: net.Socket[] = [];
afterAll(() => {
  for (const s of sockets) s.destroy();
  for (const s of servers) s.close();
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** A loopback server that takes connections and never answers. */
async function silentServer(): Promise<number> {
  const srv = net.createServer((s) => void sockets.push(s));
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return (srv.address() as net.AddressInfo).port;
}

/** The promise's outcome, or 'still waiting' after `ms`. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'still waiting'> =>
  Promise.race([p, new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms))]);

describe('an S3 endpoint that never answers', () => {
  it('a request is abandoned after its idle timeout as a Transport error, and the engine goes on', async () => {
    const port = await silentServer();
    const fx = makeSite('70', { rows: 10 });
    cleanup.push(fx.data);
    const target = new S3Target({ bucket: 'hq', endpoint: `http://127.0.0.1:${port}`, accessKeyId: 'k', secretAccessKey: 's', writePrefix: sitePrefix(fx.site), requestTimeoutMs: 300 });
    const t0 = Date.now();
    const head = await within(
      target.head(`${sitePrefix(fx.site)}x`).then(
        () => 'answered',
        (e: Error) => e,
      ),
      10_000,
    );
    expect(head).toBeInstanceOf(Error);
    expect(head).toMatchObject({ name: 'SyncError', kind: 'Transport' });
    expect(Date.now() - t0).toBeLessThan(5_000);

    // The engine: a round ends with its steps failed and scheduled again, and close() returns.
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target, retry: { baseMs: 60_000, maxMs: 60_000, jitter: 0 }, scheduledTags: null });
    await e.enqueueSnapshotSync();
    const round = await within(e.runOnce(), 20_000);
    expect(round).not.toBe('still waiting');
    expect(e.status().pendingItems).toBeGreaterThan(0);
    expect(e.status().lastError).toMatch(/TimeoutError/);
    expect(await within(e.close(), 5_000)).not.toBe('still waiting');
  }, 40_000);
  it('without requestTimeoutMs the idle timeout is 60 s, not none (the SDK waits for ever by default)', async () => {
    const target = new S3Target({ bucket: 'hq', endpoint: 'http://127.0.0.1:9', accessKeyId: 'k', secretAccessKey: 's' });
    // The SDK's handler, as the client resolved it (private to S3Target; the 60 s are not waited out here).
    const handler = (target as unknown as { client: { config: { requestHandler: { configProvider: Promise<{ socketTimeout?: number; connectionTimeout?: number }> } } } }).client.config.requestHandler;
    expect(DEFAULT_S3_REQUEST_TIMEOUT_MS).toBe(60_000);
    expect(await handler.configProvider).toMatchObject({ socketTimeout: 60_000, connectionTimeout: 60_000 });
    expect(() => new S3Target({ bucket: 'hq', accessKeyId: 'k', secretAccessKey: 's', requestTimeoutMs: -1 })).toThrow(/requestTimeoutMs: expected a positive number of milliseconds, got -1/);
  });
});
