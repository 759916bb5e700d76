// `tilstand modules password` for a module the site did not start with (docs/modules.md, "Writing a
// module"): it was refused for any name but the four seed modules, so a new module (here a yard
// system) had no way to get broker credentials, and could not connect at all.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initDataDir } from '../init.ts';
import { Site } from '../site.ts';
import { runMain as run } from './test-support.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-new-module-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('tilstand modules password for a new module', () => {
  it('makes a broker user for it, with which it connects and publishes its own events', { timeout: 60_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    const r = await run(['modules', 'password', '--module', 'yard', '--data', data]);
    expect(r.code, r.err).toBe(0);
    const password = /^new broker password for module yard \(user 'yard'\): (\S+)$/m.exec(r.out)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    // A new user is told what it may do; the "next connection needs it" note is for a replaced one.
    expect(r.out).toContain("'yard' is a new module user: it may publish on tilstand/<site>/events/yard/<stream>");
    expect(r.out).not.toContain('the old one');
    expect((await run(['modules', 'list', '--data', data])).out).toMatch(/^yard {2}password set /m);
    const again = await run(['modules', 'password', '--module', 'yard', '--data', data]);
    expect(again.out).toContain('the old one it is refused');
    expect(again.out).not.toContain('new module user');
    const fresh = /\): (\S+)$/m.exec(again.out)![1]!;

    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    const client = mqtt.connect(site.mqttUrl, { username: 'yard', password: fresh, clientId: 'module-north-yard', protocolVersion: 4, reconnectPeriod: 0, clean: false });
    try {
      await new Promise<void>((resolve, reject) => {
        client.once('connect', () => resolve());
        client.once('error', reject);
      });
      const event = { op: 'r', before: null, after: { door_id: 'D-01', state: 'free' }, source: { module: 'yard', stream: 'doors', seq: 1 }, ts_ms: Date.now(), contract: { name: 'yard.doors', version: 1 } };
      // PUBACK: the broker took it as this module's event (a refused publish closes the connection).
      await client.publishAsync('tilstand/north/events/yard/doors', JSON.stringify(event), { qos: 1 });
      // Another module's topic stays refused.
      const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
      client.publish('tilstand/north/events/inventory/stock', '{}', { qos: 1 });
      await closed;
      // Journaled and kept: no contract yet (nor a binding), so it waits in dead letters for them.
      site.ingestor.commitAll();
      const letters = site.ingestor.listDeadLetters({ status: 'open' });
      expect(letters.map((d) => [d.topic, d.reason])).toEqual([['tilstand/north/events/yard/doors', 'no_contract']]);
    } finally {
      await client.endAsync(true);
      await site.stop();
    }
  });

  it('refuses a name that is no module name, or one of the site\'s own users, naming what is expected', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    const slash = await run(['modules', 'password', '--module', 'yard/doors', '--data', data]);
    expect([slash.code, slash.err]).toEqual([2, `tilstand: option '--module': expected a module name ([A-Za-z0-9][A-Za-z0-9_-]{0,63}, the <module> level of its topics), got "yard/doors"\n`]);
    const plus = await run(['modules', 'password', '--module', '+', '--data', data]);
    expect(plus.code).toBe(2);
    for (const own of ['tilstand', 'admin']) {
      const r = await run(['modules', 'password', '--module', own, '--data', data]);
      expect([r.code, r.err]).toEqual([2, `tilstand: option '--module': '${own}' is the site's own broker user, not a module; expected a module name such as operations, inventory, commerce, procurement or one of your own\n`]);
    }
    expect((await run(['modules', 'list', '--data', data])).out).not.toMatch(/^(tilstand|admin|\+) /m);
  });
});
