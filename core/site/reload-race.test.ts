// A reload reads config.json, then loads and checks its rule files (esbuild finds each file's
// imports, tsx imports a changed one): the file can change meanwhile. A shift lead's reorder point
// set from the Stock screen (`setReorderPolicy`: written to config.json and applied at once) or
// another reload then applied a newer file first, and the reload that read the older one must not
// put that back over it: what a reload applies is config.json as it is when it applies.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
const RULE_PATH = 'rules/quiet.mts';
const RULE = `export default { id: 'quiet', version: '1', description: 'proposes nothing', messages: { 'quiet.note': { en: 'a note', nb: 'et notat', de: 'eine Notiz' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n`;

let dir: string;
let data: string;
let site: Site | undefined;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-reload-race-'));
  data = join(dir, 'site');
  await initDataDir({ data, site: 'north', scrypt: FAST, config: (c) => ({ ...c, agent: { ...c.agent, ruleFiles: [RULE_PATH] } }) });
  mkdirSync(join(data, 'rules'), { recursive: true });
  writeFileSync(join(data, RULE_PATH), RULE);
  site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
}, 60_000);
afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a reload while config.json changes', () => {
  it('does not put back the older file over a reorder point set from the floor while its rule files loaded', async () => {
    const s = site!;
    // Reads config.json (no policy for ITEM-001 yet), then waits for its rule file's check.
    const reload = s.reloadConfig();
    // Meanwhile a shift lead sets a reorder point: written to config.json and applied now.
    s.setReorderPolicy('Lena', 'ITEM-001', null, { reorderPoint: 40, orderUpTo: 150 });
    expect(s.config.agent.reorderByItem?.['ITEM-001']).toMatchObject({ reorderPoint: 40, orderUpTo: 150 });
    await reload;
    // The file says 40/150, and so does the site (its agent, and what it records for its next start).
    expect(JSON.parse(readFileSync(join(data, 'config.json'), 'utf8')).agent.reorderByItem['ITEM-001']).toMatchObject({ reorderPoint: 40, orderUpTo: 150 });
    expect(s.config.agent.reorderByItem?.['ITEM-001']).toMatchObject({ reorderPoint: 40, orderUpTo: 150 });
    expect(s.decisions!.agent.config.reorderByItem['ITEM-001']).toMatchObject({ reorderPoint: 40, orderUpTo: 150 });
  });

  it('applies the newer file when two reloads overlap and the later one finishes first', async () => {
    const s = site!;
    const raw = JSON.parse(readFileSync(join(data, 'config.json'), 'utf8'));
    const withInterval = (ms: number) => writeFileSync(join(data, 'config.json'), `${JSON.stringify({ ...raw, agent: { ...raw.agent, intervalMs: ms } }, null, 2)}\n`);
    withInterval(120_000);
    const first = s.reloadConfig(); // reads 120 s, then checks the rule file
    // The next edit names no rule file (a restart's matter): its reload has nothing to wait for.
    writeFileSync(join(data, 'config.json'), `${JSON.stringify({ ...raw, agent: { ...raw.agent, intervalMs: 180_000, ruleFiles: [] } }, null, 2)}\n`);
    const second = s.reloadConfig();
    await Promise.all([first, second]);
    expect(s.config.agent.intervalMs).toBe(180_000);
  });
});
