// ModuleClient and its dead letter notices (tilstand/<site>/letters/<module>), against a real
// aedes broker on 127.0.0.1 (port 0, no ACL: the test publishes what a site would, and worse).
import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DeadLetterNotice } from '../letter-notices.ts';
import { ModuleClient, type ModuleClientOptions } from './client.ts';

let aedes: Aedes;
let server: net.Server;
let url: string;
let dir: string;
let site: MqttClient;
const subscribed = new Set<string>();
const clients: ModuleClient[] = [];
const warnings: string[] = [];

beforeEach(async () => {
  aedes = await Aedes.createBroker();
  aedes.on('subscribe', (subs) => subs.forEach((s) => subscribed.add(s.topic)));
  server = net.createServer(aedes.handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'tilstand-client-letters-'));
  site = await mqtt.connectAsync(url, { clientId: 'tilstand-s1-site', clean: true });
  warnings.length = 0;
  subscribed.clear();
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await site.endAsync(true);
  await new Promise<void>((r) => aedes.close(() => r()));
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

async function until(pred: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const open = async (extra: Partial<ModuleClientOptions> = {}): Promise<ModuleClient> => {
  const c = new ModuleClient({ url, site: 's1', module: 'inventory', outboxPath: join(dir, 'outbox.db'), reconnect_period_ms: 100, onWarning: (m) => warnings.push(m), ...extra });
  clients.push(c);
  await c.connected();
  await until(() => subscribed.has('tilstand/s1/letters/inventory'), 'the letters subscription');
  return c;
};

const NOTICE = {
  kind: 'letter',
  module: 'inventory',
  stream: 'stock',
  seq: 812,
  reason: 'contract_violation',
  detail: "field 'qty': expected INT, got a string \"three\"",
  path: '$.after.qty',
  letter: '4711',
  at: '2026-12-06T01:45:34.123Z',
};
const SUMMARY = {
  kind: 'summary',
  module: 'inventory',
  more: 4312,
  since: '2026-12-06T01:45:35.000Z',
  until: '2026-12-06T01:45:35.990Z',
  reasons: { contract_violation: 4312 },
  first_letter: '4722',
  last_letter: '9033',
  detail: 'and 4,312 more dead letters since 2026-12-06T01:45:35.000Z (contract_violation 4,312), letters 4722..9033; at most 10 notices a second are sent',
  at: '2026-12-06T01:45:36.001Z',
};
const send = (payload: unknown) => site.publishAsync('tilstand/s1/letters/inventory', typeof payload === 'string' ? payload : JSON.stringify(payload), { qos: 1 });

it('hands each dead letter notice to onDeadLetter, letters and summaries', async () => {
  const got: DeadLetterNotice[] = [];
  await open({ onDeadLetter: (n) => got.push(n) });
  await send(NOTICE);
  await send(SUMMARY);
  await until(() => got.length === 2, 'two notices');
  expect(got).toEqual([NOTICE, SUMMARY]);
  expect(warnings).toEqual([]);
});

it('without onDeadLetter, says each notice in a warning line', async () => {
  await open();
  await send(NOTICE);
  await send(SUMMARY);
  await until(() => warnings.length === 2, 'two warnings');
  expect(warnings[0]).toBe(`Tilstand refused an event of stock seq 812: contract_violation: ${NOTICE.detail} (dead letter 4711, received 2026-12-06T01:45:34.123Z)`);
  expect(warnings[1]).toMatch(/^Tilstand refused more events: and 4,312 more dead letters since/);
});

it('refuses a notice of the wrong shape (forbidden keys, another module, bad fields) with a warning, and goes on', async () => {
  const got: DeadLetterNotice[] = [];
  await open({
    onDeadLetter: (n) => {
      got.push(n);
      if (n.kind === 'letter' && n.letter === '13') throw new Error('module code failed');
    },
  });
  const bad = [
    '{"__proto__":{"polluted":1},"kind":"letter"}',
    'not json',
    '[1,2]',
    { ...NOTICE, module: 'operations' },
    { ...NOTICE, seq: -1 },
    { ...NOTICE, seq: 1.5 },
    { ...NOTICE, stream: '../x' },
    { ...NOTICE, letter: 'DROP TABLE' },
    { ...NOTICE, at: 'yesterday' },
    { ...NOTICE, reason: 42 },
    { ...NOTICE, kind: 'other' },
    { ...SUMMARY, more: 0 },
    { ...SUMMARY, reasons: { contract_violation: 'many' } },
  ];
  for (const b of bad) await send(b);
  await send({ ...NOTICE, letter: '13', seq: null, stream: null, path: null });
  await until(() => warnings.length === bad.length + 1, 'a warning each');
  expect(warnings[0]).toMatch(/^dead letter notice refused: forbidden key '__proto__'/);
  expect(warnings[1]).toMatch(/^dead letter notice refused: payload is not JSON/);
  expect(warnings[2]).toMatch(/^dead letter notice refused: expected a JSON object/);
  expect(warnings[3]).toMatch(/^dead letter notice refused: expected module "inventory"/);
  for (const w of warnings.slice(4, bad.length)) expect(w).toMatch(/^dead letter notice refused: expected /);
  expect(warnings[bad.length]).toBe('onDeadLetter threw: module code failed');
  expect(got).toEqual([{ ...NOTICE, letter: '13', seq: null, stream: null, path: null }]);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});
