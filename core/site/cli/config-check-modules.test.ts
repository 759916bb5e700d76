// `tilstand config check` on an external-broker site says which modules the site reads there
// (config broker.modules, else the four seed modules): a module not listed has no subscription and
// mosquitto drops its events, so the IT person adding one must see the list, in the text as in
// --json, and whether it is the default.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMain as run } from './test-support.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-config-check-modules-'));
  writeFileSync(join(dir, 'broker.pw'), 'pw\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const writeConfig = (broker: Record<string, unknown>) => writeFileSync(join(dir, 'config.json'), JSON.stringify({ site: 'north', broker }));
const external = (extra: Record<string, unknown> = {}) => ({ mode: 'external', url: 'mqtt://127.0.0.1:1884', username: 'tilstand', passwordFile: 'broker.pw', ...extra });

describe('config check: the modules an external broker\'s site reads', () => {
  it('lists the default, the four seed modules, saying it is the default; --json fills them in', async () => {
    writeConfig(external());
    const r = await run(['config', 'check', '--data', dir]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out.split('\n')).toContain(
      'broker: external mqtt://127.0.0.1:1884 as tilstand; reads the events of 4 modules: operations, inventory, commerce, procurement (the default, the seed modules: config broker.modules lists others); a module not listed is not read',
    );
    const j = await run(['config', 'check', '--data', dir, '--json']);
    expect(j.code).toBe(0);
    expect((JSON.parse(j.out) as { broker: { modules: string[] } }).broker.modules).toEqual(['operations', 'inventory', 'commerce', 'procurement']);
  });

  it('lists the modules config.json gives, naming the key', async () => {
    writeConfig(external({ modules: ['inventory', 'yard'] }));
    const r = await run(['config', 'check', '--data', dir]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out.split('\n')).toContain('broker: external mqtt://127.0.0.1:1884 as tilstand; reads the events of 2 modules: inventory, yard (config broker.modules); a module not listed is not read');
    expect(r.out).not.toContain('operations');
  });

  it('says nothing of modules for the embedded broker, which passes every module\'s events', async () => {
    writeConfig({ mode: 'embedded' });
    const r = await run(['config', 'check', '--data', dir]);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('broker:');
    const j = JSON.parse((await run(['config', 'check', '--data', dir, '--json'])).out) as { broker: Record<string, unknown> };
    expect(j.broker.mode).toBe('embedded');
    expect(j.broker).not.toHaveProperty('modules');
  });
});
