// The module client refuses locally, before storing or sending, what the site's parseEnvelope
// would refuse, with the site's reason words: an image nested deeper than 512 levels (`bad_json`),
// a forbidden key or a lone surrogate (`unsafe_json`). Before, only the envelope's shape and its
// size were checked, so such an event took a seq, was acknowledged, and the module learned of it
// only from a dead letter. Against a real embedded aedes broker on 127.0.0.1 (port 0).
import net, { type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseEnvelope } from '../envelope.ts';
import { ModuleClient } from './client.ts';

let aedes: Aedes;
let server: net.Server;
let url: string;
let dir: string;
const clients: ModuleClient[] = [];

beforeEach(async () => {
  aedes = await Aedes.createBroker();
  server = net.createServer(aedes.handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'tilstand-module-client-refusals-'));
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await new Promise<void>((r) => aedes.close(() => r()));
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const CONTRACT = { name: 'inventory.stock', version: 1 };
const row = (qty: number) => ({ item: 'A-1', location: 'L1', qty });

/** `depth` levels of arrays (the image's value at `after.deep`). */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe('ModuleClient: what the site would refuse is refused before sending', () => {
  it.each([
    ['an image nested deeper than 512 levels', { ...row(1), deep: nested(600) }, 'bad_json', /nesting deeper than 512 levels/],
    ['a lone surrogate in a string', { ...row(1), item: 'A-\ud83d' }, 'unsafe_json', /a string holds a lone surrogate/],
    ['a forbidden key', { ...row(1), constructor: 'x' }, 'unsafe_json', /forbidden key 'constructor'/],
    ['a __proto__ key (an own property, as JSON.parse makes it)', { ...row(1), ...(JSON.parse('{"__proto__":{"x":1}}') as object) }, 'unsafe_json', /forbidden key '__proto__'/],
  ])('%s', async (_what, after, reason, detail) => {
    // The site refuses this very envelope for the reason the client gives.
    const text = JSON.stringify({ op: 'c', before: null, after, source: { module: 'inventory', stream: 'stock', seq: 1 }, ts_ms: 1, contract: CONTRACT });
    const site = parseEnvelope('tilstand/s1/events/inventory/stock', Buffer.from(text), { payload_bytes_max: 256 * 1024 }, { site: 's1' });
    expect(site.ok).toBe(false);
    if (!site.ok) expect(site.reason).toBe(reason);

    const c = new ModuleClient({ url, username: 'inventory', password: 'secret', site: 's1', module: 'inventory', outboxPath: join(dir, 'outbox.db'), onWarning: () => undefined });
    clients.push(c);
    await c.connected();
    const refused = c.publish('stock', 'c', null, after as Record<string, unknown>, CONTRACT);
    await expect(refused).rejects.toThrow(`event refused before sending: ${reason}: `);
    await expect(refused).rejects.toThrow(detail);
    expect(c.lastSeq('stock')).toBe(0); // no seq consumed
    expect(await c.publish('stock', 'c', null, row(1), CONTRACT)).toEqual({ seq: 1 });
  });

  it('an event above payload_bytes_max: too_large, as the site words it', async () => {
    const c = new ModuleClient({ url, username: 'inventory', password: 'secret', site: 's1', module: 'inventory', outboxPath: join(dir, 'outbox.db'), onWarning: () => undefined });
    clients.push(c);
    await expect(c.publish('stock', 'c', null, { ...row(1), blob: 'x'.repeat(300_000) }, CONTRACT)).rejects.toThrow(
      /^event refused before sending: too_large: payload is \d+ bytes, more than payload_bytes_max 262144$/,
    );
    expect(c.lastSeq('stock')).toBe(0);
  });
});
