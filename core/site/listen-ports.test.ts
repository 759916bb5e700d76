// A port that is taken at start: only a demo's own ports (config.json's, the demo's defaults) fall
// back to a free one; a port given as an option (`--http-port`, `--mqtt-port`) that is taken is an
// error naming the option and the port, with --demo too, and a config port's names its key.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { initDataDir } from './init.ts';
import { Site, SiteError } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
let taken: Server;
let port: number;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-listen-ports-'));
  taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  port = (taken.address() as AddressInfo).port;
});
afterEach(async () => {
  await new Promise((r) => taken.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** Site.start's error, or a failure of the test when it started. */
async function startError(o: Parameters<typeof Site.start>[0]): Promise<Error> {
  return Site.start(o).then(
    async (s) => (await s.stop(), new Error(`started: http ${s.httpUrl}, mqtt ${s.mqttUrl}`)),
    (e: Error) => e,
  );
}

it('--demo with a taken --http-port is an error naming the option and the port, not a free port instead', async () => {
  const e = await startError({ data: join(dir, 'demo'), demo: true, httpPort: port, mqttPort: 0, ui: false, agentTimer: false });
  expect(e).toBeInstanceOf(SiteError);
  expect((e as SiteError).kind).toBe('Listen');
  expect(e.message).toMatch(new RegExp(`^http: cannot listen on port ${port} \\(--http-port\\): listen EADDRINUSE`));
});

it('--demo with a taken --mqtt-port is an error naming the option and the port, not a free port instead', async () => {
  const e = await startError({ data: join(dir, 'demo'), demo: true, mqttPort: port, httpPort: 0, ui: false, agentTimer: false });
  expect(e).toBeInstanceOf(SiteError);
  expect((e as SiteError).kind).toBe('Listen');
  expect(e.message).toMatch(new RegExp(`^broker: cannot listen on port ${port} \\(--mqtt-port\\): listen EADDRINUSE`));
});

it("--demo's own port (config.json's) that is taken falls back to a free one, and says so", async () => {
  const data = join(dir, 'demo');
  await initDataDir({ data, site: 'demo', scrypt: FAST, config: (c) => ({ ...c, http: { ...c.http, port } }) });
  const lines: string[] = [];
  const site = await Site.start({ data, demo: true, mqttPort: 0, ui: false, agentTimer: false, demoStepMs: 60_000, log: (l) => lines.push(l) });
  try {
    expect(site.httpUrl).not.toBe(`http://127.0.0.1:${port}`);
    expect(lines).toContain(`http: port ${port} is in use; listening on a free port instead`);
  } finally {
    await site.stop();
  }
});

it("without --demo a taken port of config.json is an error naming its key", async () => {
  const data = join(dir, 'north');
  await initDataDir({ data, site: 'north', scrypt: FAST, config: (c) => ({ ...c, http: { ...c.http, port } }) });
  const e = await startError({ data, mqttPort: 0, ui: false, agentTimer: false });
  expect(e).toBeInstanceOf(SiteError);
  expect(e.message).toMatch(new RegExp(`^http: cannot listen on port ${port} \\(config http\\.port\\): listen EADDRINUSE`));
});
