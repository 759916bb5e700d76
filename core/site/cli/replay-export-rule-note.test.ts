// `tilstand replay export` copies the rule files config.json names as they are at the export, and
// says on stderr where that is not the code the site last started with (site.db's record,
// site.ts LOADED_RULE_FILES_KEY): a file edited since, named since, or no longer named.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ruleFileCode } from '../../agents/rule-files.ts';
import { initDataDir } from '../init.ts';
import { openSiteDb, setSiteMeta } from '../site-db.ts';
import { LOADED_RULE_FILES_KEY, type LoadedRuleFilesRecord } from '../site.ts';
import { runMain } from './test-support.ts';

const FAST = { N: 1024, r: 8, p: 1 };
const RULE_PATH = 'rules/watch.mts';
const RULE = `export default {
  id: 'watch',
  version: '1',
  description: 'nothing',
  messages: {
    'watch.explanation': { en: 'x', nb: 'x', de: 'x' },
  },
  evaluate: () => [],
  recheck: () => ({ holds: true }),
  effectSeen: () => false,
};
`;

let dir: string;
let data: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-export-note-'));
  data = join(dir, 'd');
  await initDataDir({ data, site: 'note', scrypt: FAST });
  mkdirSync(join(data, 'rules'));
  writeFileSync(join(data, RULE_PATH), RULE);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function record(files: LoadedRuleFilesRecord['files'] | string): void {
  const db = openSiteDb(join(data, 'site.db'));
  try {
    setSiteMeta(db, LOADED_RULE_FILES_KEY, typeof files === 'string' ? files : JSON.stringify({ startedAtMs: Date.parse('2026-12-01T06:00:00Z'), files } satisfies LoadedRuleFilesRecord));
  } finally {
    db.close();
  }
}

function ruleFilesInConfig(paths: string[] | undefined): void {
  const file = join(data, 'config.json');
  const c = JSON.parse(readFileSync(file, 'utf8')) as { agent: Record<string, unknown> };
  const { ruleFiles: _, ...agent } = c.agent;
  writeFileSync(file, JSON.stringify({ ...c, agent: paths === undefined ? agent : { ...agent, ruleFiles: paths } }, null, 2));
}

let n = 0;
const exportErr = async (): Promise<string> => {
  const r = await runMain(['replay', 'export', '--data', data, '--tag', `t${++n}`, '--until', 'now', '--out', join(dir, `out-${n}`)]);
  expect(r.code, r.err).toBe(0);
  return r.err;
};

it('says nothing when the files named are the ones the site started with, as they were', async () => {
  ruleFilesInConfig([RULE_PATH]);
  record([{ path: RULE_PATH, sha256: (await ruleFileCode(join(data, RULE_PATH))).sha256 }]);
  expect(await exportErr()).not.toContain('note: rule file');
});

it('names a rule file config.json names that the site did not start with (the fixture holds code the live agent never ran)', async () => {
  ruleFilesInConfig([RULE_PATH]);
  record([]);
  expect(await exportErr()).toContain(`tilstand: note: rule file ${RULE_PATH} was not loaded at the site's start at 2026-12-01T06:00:00.000Z`);
});

it('names a rule file the site started with that config.json no longer names (the live proposals came from it, the fixture lacks it)', async () => {
  ruleFilesInConfig(undefined);
  record([{ path: RULE_PATH, sha256: (await ruleFileCode(join(data, RULE_PATH))).sha256 }]);
  expect(await exportErr()).toContain(`tilstand: note: rule file ${RULE_PATH} ran since the site's start at 2026-12-01T06:00:00.000Z`);
});

it('exports all the same when the record cannot be read as one (a damaged or another version\'s value): nothing to compare with', async () => {
  ruleFilesInConfig([RULE_PATH]);
  for (const bad of ['{"files": []}', '{"startedAtMs": 1, "files": [{"path": 3}]}', 'not json']) {
    record(bad);
    expect(await exportErr()).not.toContain('note: rule file');
  }
});

describe('the time zone in the fixture', () => {
  const exportedZone = async (): Promise<string> => {
    const out = join(dir, `out-${n + 1}`);
    await exportErr();
    return (JSON.parse(readFileSync(join(out, 'fixture.json'), 'utf8')) as { timeZone: string }).timeZone;
  };
  const withZone = (timeZone: unknown) => record(JSON.stringify({ startedAtMs: Date.parse('2026-12-01T06:00:00Z'), timeZone, files: [] }));

  it("is the zone the site last started in, not the exporting shell's (a service's TZ is not the admin's)", async () => {
    ruleFilesInConfig(undefined);
    const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const site = own === 'Asia/Tokyo' ? 'America/Los_Angeles' : 'Asia/Tokyo';
    withZone(site);
    expect(await exportedZone()).toBe(site);
  });

  it("is this process's without a record of the zone (an earlier version's start), or with one this Node does not know", async () => {
    ruleFilesInConfig(undefined);
    const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
    record([]);
    expect(await exportedZone()).toBe(own);
    withZone('Mars/Olympus_Mons');
    expect(await exportedZone()).toBe(own);
  });
});
