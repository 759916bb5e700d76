// What a start records in site.db `site_meta` for the next — the rule files it loaded
// (LOADED_RULE_FILES_KEY, which `replay export` compares the files with) and the agent config it
// ran with (`agent_config`, whether the next start's first run evaluates every row) — is recorded
// by a start that came up, not by one that failed after opening site.db (a taken port): that
// start ran nothing, and the last one that did is what the records must go on naming.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { initDataDir } from './init.ts';
import { openSiteDb, siteMeta } from './site-db.ts';
import { LOADED_RULE_FILES_KEY, Site, SiteError } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };

/** A rule of the site's own that finds nothing (the test is about what the start records). */
const QUIET_RULE = `const quiet = {
  id: 'quiet',
  version: '1',
  description: 'Finds nothing.',
  messages: { 'quiet.none': { en: 'Nothing.', nb: 'Ingenting.', de: 'Nichts.' } },
  evaluate: () => [],
  recheck: () => ({ holds: true }),
  effectSeen: () => false,
};
export default quiet;
`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-start-records-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function records(data: string): { ruleFiles: unknown; agentConfig: unknown } {
  const db = openSiteDb(join(data, 'site.db'), { readonly: true });
  try {
    const value = (key: string) => JSON.parse(siteMeta(db, key) ?? 'null') as unknown;
    return { ruleFiles: value(LOADED_RULE_FILES_KEY), agentConfig: value('agent_config') };
  } finally {
    db.close();
  }
}

it('a start that fails at listen leaves the rule files and the agent config of the last start recorded', async () => {
  const data = join(dir, 'north');
  await initDataDir({ data, site: 'north', scrypt: FAST });
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  await site.stop();
  const before = records(data);
  expect(before.ruleFiles).toMatchObject({ files: [] });

  // A rule file named and a threshold changed since; the next start cannot have its HTTP port.
  mkdirSync(join(data, 'rules'));
  writeFileSync(join(data, 'rules', 'quiet.mts'), QUIET_RULE);
  const file = join(data, 'config.json');
  const config = JSON.parse(readFileSync(file, 'utf8')) as { agent: Record<string, unknown> };
  config.agent = { ...config.agent, idleMsMin: 0, ruleFiles: ['rules/quiet.mts'] };
  writeFileSync(file, JSON.stringify(config, null, 2));
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  try {
    const httpPort = (taken.address() as AddressInfo).port;
    const e = await Site.start({ data, mqttPort: 0, httpPort, ui: false, agentTimer: false }).then(
      async (s) => (await s.stop(), new Error('started')),
      (err: Error) => err,
    );
    expect(e).toBeInstanceOf(SiteError);
  } finally {
    await new Promise((r) => taken.close(r));
  }
  expect(records(data)).toEqual(before);

  // The start that comes up records them.
  const next = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  await next.stop();
  const after = records(data);
  expect(after.ruleFiles).toMatchObject({ files: [{ path: 'rules/quiet.mts' }] });
  expect(after.agentConfig).toMatchObject({ idleMsMin: 0, ruleFiles: ['rules/quiet.mts'] });
});

it("records the time zone the site runs in (its process's), which `replay export` puts in the fixture", async () => {
  const data = join(dir, 'west');
  await initDataDir({ data, site: 'west', scrypt: FAST });
  const was = process.env.TZ;
  process.env.TZ = 'America/Los_Angeles';
  try {
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    await site.stop();
  } finally {
    if (was === undefined) delete process.env.TZ;
    else process.env.TZ = was;
  }
  expect(records(data).ruleFiles).toMatchObject({ timeZone: 'America/Los_Angeles' });
});
