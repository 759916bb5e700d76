// JSON a person writes by hand — config.json, a contract file, a replay's rules config — with a key
// given twice is refused, naming the key's path: JSON.parse keeps the last value and says nothing,
// so a config.json edited to `"site": "s1", …, "site": "s2"` ran as s2 and `config check` said ok.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentSpec } from '../replay/agent-spec.ts';
import { ConfigError, readConfig } from './config.ts';
import { initDataDir } from './init.ts';
import { runMain } from './cli/test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-json-repeated-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const data = join(dir, 'site');
beforeAll(async () => {
  await initDataDir({ data, site: 's1' });
});

describe('a key given twice', () => {
  it('in config.json: readConfig and `config check` name its path; the file as written stays', async () => {
    const file = join(data, 'config.json');
    const good = readFileSync(file, 'utf8');
    try {
      // The site id given twice, and (second case) a key inside a section.
      const twiceSite = good.replace('"site": "s1"', '"site": "s1", "site": "s2"');
      expect(twiceSite).not.toBe(good);
      writeFileSync(file, twiceSite);
      expect(() => readConfig(data)).toThrow(ConfigError);
      expect(() => readConfig(data)).toThrow(/^config site: given twice in .*config\.json; expected each key once/);
      const r = await runMain(['config', 'check', '--data', data]);
      expect(r.code).not.toBe(0);
      expect(r.err).toContain('config site: given twice');
      const j = JSON.parse(good) as Record<string, unknown>;
      const nested = JSON.stringify({ ...j, http: { port: 8470 } }).replace('"port":8470', '"port":8470,"port":8471');
      writeFileSync(file, nested);
      expect(() => readConfig(data)).toThrow(/^config http\.port: given twice/);
    } finally {
      writeFileSync(file, good);
    }
    expect(readConfig(data).site).toBe('s1');
  });

  it('in a contract file: exit 2 naming the path, nothing registered', async () => {
    const v1 = readFileSync(join(data, 'contracts', 'inventory.stock', 'v1.json'), 'utf8');
    const file = join(dir, 'c.json');
    const j = JSON.parse(v1) as { version: number };
    writeFileSync(file, JSON.stringify({ ...j, version: 2 }).replace('"version":2', '"version":2,"version":3'));
    const r = await runMain(['contracts', 'add', '--data', data, '--file', file]);
    expect([r.code, r.out, r.err]).toEqual([2, '', `tilstand: ${file} is not a valid contract: 'version' is given twice; expected each key once (JSON would keep only the last)\n`]);
  });

  it("in a replay's rules config: refused naming the path", () => {
    const file = join(dir, 'rules.json');
    writeFileSync(file, '{"rules": ["stock-reorder"], "config": {"reorderPoint": 5, "reorderPoint": 9}}');
    expect(() => loadAgentSpec(file)).toThrow(`--agent ${file}: 'config.reorderPoint' is given twice; expected each key once (JSON would keep only the last)`);
  });
});
