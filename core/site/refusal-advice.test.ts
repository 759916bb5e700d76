// The broker's refusals carry their reason (core/ingest/broker.ts BrokerRefusal.reason), and the
// site's log line and module_refused alarm advise by it: a module that connected with a client id
// another module holds (CONNACK 2, "Identifier rejected") was told to check its username and
// password, which were right.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BrokerRefusal } from '../ingest/broker.ts';
import { readModuleSecrets } from './demo/run.ts';
import { initDataDir } from './init.ts';
import { refusalAlarms, refusalLogLine } from './refusals.ts';
import { Site } from './site.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-refusal-advice-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

describe('refusal advice', () => {
  it('a client id another module holds: the log and the alarm say so, not "check the username and password"', async () => {
    const data = join(dir, 'rc');
    await initDataDir({ data, site: 'rc' });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    const secrets = readModuleSecrets(join(data, 'secrets', 'modules.json')).modules;
    const id = 'shared-id';
    const ops = mqtt.connect(site.mqttUrl, { username: secrets.operations!.username, password: secrets.operations!.password, clientId: id, protocolVersion: 4, reconnectPeriod: 0 });
    closers.push(() => ops.endAsync());
    await new Promise<void>((resolve, reject) => {
      ops.once('connect', () => resolve());
      ops.once('error', reject);
    });
    const inv = mqtt.connect(site.mqttUrl, { username: secrets.inventory!.username, password: secrets.inventory!.password, clientId: id, protocolVersion: 4, reconnectPeriod: 0 });
    const refused = await new Promise<Error>((resolve) => inv.once('error', resolve));
    inv.end(true);
    expect(refused.message).toMatch(/Identifier rejected/i);

    expect(site.brokerRefusals()).toEqual([expect.objectContaining({ kind: 'connect', who: secrets.inventory!.username, reason: 'client_id', what: `client id "${id}" is taken by "${secrets.operations!.username}"` })]);
    const line = readFileSync(join(data, 'logs', 'site.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('broker: refused'));
    expect(line).toHaveLength(1);
    expect(line[0]).toContain(
      `broker: refused once a connection as "${secrets.inventory!.username}": client id "${id}" is taken by "${secrets.operations!.username}": its events are not received; another module already connects with that client id: each module needs a client id of its own (the module client library's is module-rc-<module>)`,
    );
    expect(line[0]).not.toMatch(/password/);
    const alarm = site.service.status().alarms.filter((a) => a.kind === 'module_refused');
    expect(alarm.map((a) => a.message)).toEqual([expect.stringMatching(/^connections as "inventory" refused: once \(client id "shared-id" is taken by "operations"\) — its events are not received; another module already connects with that client id/)]);
  }, 30_000);

  const refusal = (r: Partial<BrokerRefusal> & Pick<BrokerRefusal, 'kind' | 'who' | 'what' | 'reason'>): BrokerRefusal => ({ count: 1, firstMs: 0, lastMs: 0, ...r });

  it('words each reason for what it is', () => {
    const cases: Array<[BrokerRefusal, RegExp]> = [
      [refusal({ kind: 'connect', who: 'procurement', what: 'bad username or password', reason: 'credentials' }), /^broker: refused once a connection as "procurement": bad username or password: its events are not received; check the username and password the module connects with against those `tilstand init` wrote to secrets\/modules.json/],
      [refusal({ kind: 'connect', who: 'inventory', what: 'client id "x" is taken by "operations"', reason: 'client_id' }), /: its events are not received; another module already connects with that client id: each module needs a client id of its own/],
      [refusal({ kind: 'connect', who: 'inventory', what: 'credential store unavailable', reason: 'credential_store' }), /: its events are not received; the site could not check the credentials \(site\.db\)/],
      [refusal({ kind: 'connect', who: '127.0.0.1', what: 'more than preAuthBytesMax 4096 bytes before authentication', reason: 'pre_auth_bytes' }), /^broker: refused once a connection as "127\.0\.0\.1": more than preAuthBytesMax 4096 bytes before authentication: a client at that address sent more than a sign-in/],
      [refusal({ kind: 'publish', who: 'inventory', what: 'a packet of 20000 bytes, more than packetBytesMax 10000', reason: 'packet_bytes' }), /^broker: refused once a packet from "inventory": a packet of 20000 bytes, more than packetBytesMax 10000: its events are not received; a packet that large is no event/],
      [refusal({ kind: 'publish', who: 'inventory', what: 'tilstand/x/events/inventory/stock', reason: 'topic' }), /^broker: refused once a publish by "inventory" to tilstand\/x\/events\/inventory\/stock, which it may not publish to: its events on that topic are not received; a module publishes to tilstand\/rc\/events/],
    ];
    for (const [r, want] of cases) {
      const line = refusalLogLine('rc', r, 1);
      expect(line).toMatch(want);
      // Only a refused sign-in is about the password.
      expect(/password/.test(line.slice(line.indexOf(r.what) + r.what.length))).toBe(r.reason === 'credentials');
    }
    expect(refusalAlarms('rc', [cases[4]![0]], 0)[0]!.message).toMatch(/^packets from "inventory" refused: once \(a packet of 20000 bytes, more than packetBytesMax 10000\) — its events are not received; a packet that large/);
  });
});
