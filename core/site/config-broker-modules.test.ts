// Config `broker.modules` (external broker): the modules whose events the site subscribes to.
// Absent, the seed modules; given, each a module name (the topics' <module> level), once, and
// none of the site's own names; only with `broker.mode: "external"`. `config check` refuses a
// bad list naming the key, as start would.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain as run } from './cli/test-support.ts';
import { ConfigError, externalBrokerModules, parseConfig } from './config.ts';

const external = (extra: Record<string, unknown> = {}) => ({ site: 's', broker: { mode: 'external', url: 'mqtt://127.0.0.1:1884', username: 'tilstand', passwordFile: '/p', ...extra } });

function errorOf(raw: unknown): ConfigError {
  try {
    parseConfig(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

const externalBroker = (raw: unknown) => {
  const b = parseConfig(raw).broker;
  if (b.mode !== 'external') throw new Error('expected an external broker');
  return b;
};

describe('config broker.modules', () => {
  it('defaults to the seed modules and takes a module of the site\'s own', () => {
    expect(externalBrokerModules(externalBroker(external()))).toEqual(['operations', 'inventory', 'commerce', 'procurement']);
    const b = externalBroker(external({ modules: ['inventory', 'yard', 'qc-2'] }));
    expect(b.modules).toEqual(['inventory', 'yard', 'qc-2']);
    expect(externalBrokerModules(b)).toEqual(['inventory', 'yard', 'qc-2']);
  });

  it('names the key and the expectation for each bad list', () => {
    const cases: [unknown, string, RegExp][] = [
      [external({ modules: 'yard' }), 'broker.modules', /non-empty array of module names .*got "yard"/],
      [external({ modules: [] }), 'broker.modules', /non-empty array .*got an empty array/],
      [external({ modules: null }), 'broker.modules', /got null/],
      [external({ modules: ['yard', 7] }), 'broker.modules[1]', /expected a module name .*got 7/],
      [external({ modules: ['yard/doors'] }), 'broker.modules[0]', /expected a module name .*got "yard\/doors"/],
      [external({ modules: ['#'] }), 'broker.modules[0]', /expected a module name/],
      [external({ modules: ['-yard'] }), 'broker.modules[0]', /expected a module name/],
      [external({ modules: ['y'.repeat(65)] }), 'broker.modules[0]', /expected a module name/],
      [external({ modules: ['yard', 'inventory', 'yard'] }), 'broker.modules[2]', /'yard' is listed twice/],
      [external({ modules: ['tilstand'] }), 'broker.modules[0]', /'tilstand' is reserved for the site itself/],
      [external({ modules: ['yard', 'admin'] }), 'broker.modules[1]', /'admin' is reserved/],
      // Its subscriber's client id would be the site's internal client's (tilstand-<site>-site).
      [external({ modules: ['site'] }), 'broker.modules[0]', /'site' is reserved/],
      [{ site: 's', broker: { modules: ['yard'] } }, 'broker.modules', /only with broker.mode "external"/],
    ];
    for (const [raw, key, message] of cases) {
      const e = errorOf(raw);
      expect(e.key, JSON.stringify(raw)).toBe(key);
      expect(e.message, JSON.stringify(raw)).toMatch(message);
      expect(e.message).toMatch(new RegExp(`^config ${key.replace(/[[\]]/g, '\\$&')}: `));
    }
  });

  it('config check refuses a bad list with exit 2 naming the key, and passes a good one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-broker-modules-'));
    try {
      writeFileSync(join(dir, 'broker.pw'), 'pw\n');
      const write = (modules: unknown) => writeFileSync(join(dir, 'config.json'), JSON.stringify({ site: 'north', broker: { mode: 'external', url: 'mqtt://127.0.0.1:1884', username: 'tilstand', passwordFile: 'broker.pw', modules } }));
      write(['inventory', 'yard']);
      const ok = await run(['config', 'check', '--data', dir, '--json']);
      expect(ok.err).toBe('');
      expect(ok.code).toBe(0);
      expect((JSON.parse(ok.out) as { broker: { modules: string[] } }).broker.modules).toEqual(['inventory', 'yard']);
      write(['yard', 'yard']);
      const bad = await run(['config', 'check', '--data', dir]);
      expect(bad.code).toBe(2);
      expect(bad.err).toBe("tilstand: config broker.modules[1]: 'yard' is listed twice; expected each module once (each has one subscription)\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
