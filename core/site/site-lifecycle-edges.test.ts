// Site.start on the edges of its lifecycle: a data directory too deep for a unix socket, a
// config.json key set to null, and --mqtt-port on a site whose broker is external.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SOCKET_PATH_BYTES_MAX } from './control.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-lifecycle-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

it('starts a data directory too deep for a unix socket without its control socket, and says so', async () => {
  const data = join(dir, 'd'.repeat(Math.max(1, SOCKET_PATH_BYTES_MAX - dir.length)));
  expect(Buffer.byteLength(join(data, 'control.sock'))).toBeGreaterThan(SOCKET_PATH_BYTES_MAX);
  await initDataDir({ data, site: 'deep', scrypt: FAST });
  const lines: string[] = [];
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => lines.push(l) });
  try {
    expect(site.controlSocketPath).toBeUndefined();
    expect(lines.some((l) => l.includes('cannot listen') && l.includes('CLI commands will read the directory instead'))).toBe(true);
    expect(existsSync(join(data, 'control.sock'))).toBe(false);
    // No socket to answer, so a second start on the directory is refused by the tables' writer locks.
    const second = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false }).then(
      async (s) => (await s.stop(), new Error('a second site started')),
      (e: Error) => e,
    );
    expect(second.message).toMatch(/writer/);
  } finally {
    await site.stop();
  }
});

// A key given as null is no value: the defaults are for keys left out. Taken for the default, a
// `"closedRetentionMs": null` meant as "keep closed letters for good" deleted them after 30 days,
// a `"port": null` listened on 1883, all with `config check` saying ok.
it.each([
  [{ broker: { port: null } }, 'broker.port', /expected an integer from 0 to 65535, got null/],
  [{ broker: { host: null } }, 'broker.host', /expected a non-empty string, got null/],
  [{ broker: { allowInsecureNonLoopback: null } }, 'broker.allowInsecureNonLoopback', /expected true or false, got null/],
  [{ http: { port: null } }, 'http.port', /got null/],
  [{ deadLetters: { closedRetentionMs: null } }, 'deadLetters.closedRetentionMs', /got null/],
  [{ ui: { idleSignOutMs: null } }, 'ui.idleSignOutMs', /got null/],
  [{ journal: { retentionAgeMs: null } }, 'journal.retentionAgeMs', /got null/],
  [{ alarms: { streamSilentMs: { '*': null } } }, 'alarms.streamSilentMs.*', /got null/],
  [{ alarms: { streamSilentMs: null } }, 'alarms.streamSilentMs', /expected an object, got null/],
  [{ broker: null }, 'broker', /expected an object, got null/],
  [{ deadLetters: null }, 'deadLetters', /expected an object, got null/],
  [{ agent: null }, 'agent', /expected an object, got null/],
  [{ format: null }, 'format', /got null/],
])('refuses %j, naming %s', async (patch, key, message) => {
  const data = join(dir, 'nulls');
  await initDataDir({ data, site: 'nulls', scrypt: FAST });
  const file = join(data, 'config.json');
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), ...patch }));
  const e = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false }).then(
    async (s) => (await s.stop(), new Error('started')),
    (err: Error) => err,
  );
  expect(e).toMatchObject({ name: 'ConfigError', key });
  expect(e.message).toMatch(message);
});

// The external broker's port is in broker.url; the site listens on none of its own. Taken and
// ignored, `--mqtt-port 1884` left the operator believing the modules' port had moved.
it('refuses --mqtt-port on a site with an external broker, naming the option, before anything opens', async () => {
  const data = join(dir, 'ext');
  await initDataDir({
    data,
    site: 'ext',
    scrypt: FAST,
    config: (c) => ({ ...c, broker: { mode: 'external', url: 'mqtt://127.0.0.1:1', username: 'tilstand', passwordFile: 'secrets/broker.pw' } }),
  });
  writeFileSync(join(data, 'secrets', 'broker.pw'), 'pw\n');
  const lines: string[] = [];
  const e = await Site.start({ data, mqttPort: 1884, httpPort: 0, ui: false, agentTimer: false, log: (l) => lines.push(l) }).then(
    async (s) => (await s.stop(), new Error('started')),
    (err: Error) => err,
  );
  expect(e).toMatchObject({ name: 'ConfigError', key: '--mqtt-port' });
  expect(e.message).toMatch(/^option --mqtt-port: .*external broker.*broker\.url/);
  expect(lines.at(-1)).toMatch(/^site ext did not start: option --mqtt-port/);
});

// The simulated modules publish as the site's own modules (its passwords, its tables), and what
// the agent proposes on their rows goes out as commands once approved: `start --demo` in a real
// site's directory (both default to ./tilstand-data) fed it simulated stock.
it("refuses --demo on a real site's directory, naming --demo, and runs the demo where it ran before", async () => {
  const data = join(dir, 'north');
  await initDataDir({ data, site: 'north', scrypt: FAST });
  const refused = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, demoStepMs: 600_000 }).then(
    async (s) => (await s.stop(), new Error('the demo started on a real site')),
    (e: Error) => e,
  );
  expect(refused.message).toMatch(/^option --demo: .* holds site 'north', not a demo: .*tilstand start --demo --data <a new folder>/);
  expect(existsSync(join(data, 'demo'))).toBe(false);
  // A directory --demo made starts as a demo again.
  const demo = join(dir, 'demo-dir');
  const first = await Site.start({ data: demo, demo: true, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, demoStepMs: 600_000 });
  expect(first.demoModules.length).toBeGreaterThan(0);
  await first.stop();
  const again = await Site.start({ data: demo, demo: true, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, demoStepMs: 600_000 });
  expect(again.demoModules.length).toBeGreaterThan(0);
  await again.stop();
}, 60_000);
