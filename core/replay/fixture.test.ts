// What `replay run` and `replay diff` read is checked before it is used: a fixture's files against
// its manifest (nothing missing, changed or added), the manifest's and a run's JSON files for
// their shape. Damage is reported naming the file, never as a bare JSON or type error, and never
// read as if the export had written it. (Whole exported fixtures: replay.test.ts.)

import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadRun } from './diff.ts';
import { FIXTURE_FORMAT, openFixture, RUN_FORMAT } from './fixture.ts';
import { sha256File, stableJson } from './json.ts';
import { writeTar } from './tar.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-replay-fixture-test-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A fixture folder holding `files`, with a manifest that lists them (what the export writes, in small). */
function fixture(files: Record<string, string>): string {
  const fx = join(dir, 'fx');
  files = { 'events.ndjson.gz': '', ...files };
  for (const [p, text] of Object.entries(files)) write(join(fx, ...p.split('/')), text);
  const manifest = {
    format: FIXTURE_FORMAT,
    name: 'x',
    tag: 'replay-x',
    site: 's1',
    database: 'site_s1',
    cutMs: 0,
    untilMs: 1,
    tables: {},
    events: { file: 'events.ndjson.gz', count: 0, afterPosition: '0', lastPosition: null, firstAtMs: null, lastAtMs: null },
    liveAgent: { baselineRunId: null, runIds: 0, intervalMs: 60_000 },
    decisions: 0,
    liveProposals: 0,
    files: Object.keys(files).map((p) => ({ path: p, ...sha256File(join(fx, ...p.split('/'))) })),
  };
  write(join(fx, 'fixture.json'), `${stableJson(manifest)}\n`);
  return fx;
}

describe('openFixture', () => {
  it('refuses a symbolic link in a fixture folder: the replay would read, and write, through it outside the fixture', () => {
    // The outside folder holds exactly what the manifest lists, so every checksum holds.
    const fx = fixture({ 'warehouse/site_s1.db/stock/schema/schema-0': '{}' });
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    renameSync(join(fx, 'warehouse', 'site_s1.db', 'stock'), join(outside, 'stock'));
    symlinkSync(join(outside, 'stock'), join(fx, 'warehouse', 'site_s1.db', 'stock'));
    // runReplay copies the warehouse with cpSync, which keeps the link: the scratch warehouse's
    // commits would land in the outside folder.
    expect(() => openFixture(fx)).toThrow(`fixture ${fx}: warehouse/site_s1.db/stock is a symbolic link, not a file or folder of its own`);
    // A linked file is refused too (and is not read: it could be a FIFO or /dev/zero).
    const fx2 = join(dir, 'fx2');
    const fx2Files = fixture({ 'decisions.json': '[]' });
    renameSync(fx2Files, fx2);
    renameSync(join(fx2, 'decisions.json'), join(outside, 'decisions.json'));
    symlinkSync(join(outside, 'decisions.json'), join(fx2, 'decisions.json'));
    expect(() => openFixture(fx2)).toThrow(`fixture ${fx2}: decisions.json is a symbolic link, not a file or folder of its own`);
  });

  it('refuses a file its manifest does not list (the replay would use it as the export’s)', () => {
    const fx = fixture({ 'decisions.json': '[]', 'config/contracts/stock/v1.json': '{}' });
    expect(() => openFixture(fx).close()).not.toThrow();
    // runReplay copies config/contracts whole into its registry: a slipped-in version would be registered.
    write(join(fx, 'config', 'contracts', 'intruder', 'v1.json'), '{}');
    expect(() => openFixture(fx)).toThrow(`fixture ${fx}: config/contracts/intruder/v1.json is not in its manifest`);
  });

  it('reports a truncated fixture.json as damaged, naming it', () => {
    const fx = join(dir, 'fx');
    write(join(fx, 'fixture.json'), '{"format":"tilstand-replay-fixture-1","fil');
    expect(() => openFixture(fx)).toThrow(new RegExp(`^${join(fx, 'fixture.json')} is damaged: .*JSON`));
  });

  it('reports a manifest without its file list (or another field the replay reads) as damaged, not a TypeError', () => {
    const fx = join(dir, 'fx');
    write(join(fx, 'fixture.json'), JSON.stringify({ format: FIXTURE_FORMAT }));
    expect(() => openFixture(fx)).toThrow(`${join(fx, 'fixture.json')} is damaged: name: expected a string`);
    const ok = fixture({ 'decisions.json': '[]' });
    const good = readFileSync(join(ok, 'fixture.json'), 'utf8');
    for (const [key, broken, problem] of [
      ['files', undefined, 'files: expected the list of files'],
      ['files', [{ path: 'decisions.json' }], 'files[0]: expected {path, bytes, sha256}'],
      ['events', { file: 'events.ndjson.gz' }, 'events: expected {file, count, afterPosition, …}'],
      // Nothing outside the fixture is hashed or read for a hand-made manifest.
      ['files', [{ path: '../../etc/passwd', bytes: 1, sha256: 'x' }], 'files[0]: "../../etc/passwd" is not a path inside the fixture'],
      ['files', [{ path: '/etc/passwd', bytes: 1, sha256: 'x' }], 'files[0]: "/etc/passwd" is not a path inside the fixture'],
      ['files', [{ path: 'config\\..\\..\\x', bytes: 1, sha256: 'x' }], 'files[0]: "config\\\\..\\\\..\\\\x" is not a path inside the fixture'],
      ['events', { ...JSON.parse(good).events, file: '../elsewhere.ndjson.gz' }, 'events.file: "../elsewhere.ndjson.gz" is not one of its files'],
      // A zone Node does not know would be taken as UTC without a word: not the site's.
      ['timeZone', 'Europe/Nowhere', 'timeZone: "Europe/Nowhere" is not a time zone'],
    ] as const) {
      write(join(ok, 'fixture.json'), JSON.stringify({ ...JSON.parse(good), [key]: broken }));
      expect(() => openFixture(ok), key).toThrow(`${join(ok, 'fixture.json')} is damaged: ${problem}`);
    }
  });
});

describe('a fixture archive', () => {
  it('cut short at an entry’s end (a copy that stopped) is reported as a truncated archive, not as no fixture', () => {
    // Entries are sorted: config/…, decisions.json, then fixture.json.
    const fx = fixture({ 'config/config.json': '{"site":"s1"}', 'decisions.json': '[]' });
    const tar = join(dir, 'fx.tar');
    writeTar(fx, tar);
    expect(() => openFixture(tar, dir).close()).not.toThrow();
    const bytes = readFileSync(tar);
    const short = join(dir, 'short.tar');
    for (const blocks of [2, 4]) {
      // Two blocks: config/config.json (header + data); four: decisions.json too — no end-of-archive blocks.
      writeFileSync(short, bytes.subarray(0, blocks * 512));
      expect(() => openFixture(short, dir), `${blocks} blocks`).toThrow(`fixture ${short}: tar: unexpected end of archive in the next entry's header or the end-of-archive blocks (the archive was cut short)`);
    }
  });
});

describe('loadRun', () => {
  const run = (files: Record<string, string>) => {
    const r = join(dir, 'run');
    for (const [p, text] of Object.entries(files)) write(join(r, p), text);
    return r;
  };

  it('reports a truncated or foreign run.json as damaged, naming it', () => {
    const r = run({ 'run.json': '{', 'proposals.json': '[]', 'human-decisions.json': '[]' });
    expect(() => loadRun(r)).toThrow(new RegExp(`^${join(r, 'run.json')} is damaged: .*JSON`));
    write(join(r, 'run.json'), '{"format":"tilstand-replay-fixture-1"}');
    expect(() => loadRun(r)).toThrow(`${join(r, 'run.json')} is damaged: run format "tilstand-replay-fixture-1", expected ${RUN_FORMAT}`);
  });

  it('names a folder that is no run, and a run whose proposals are missing or damaged', () => {
    expect(() => loadRun(join(dir, 'nowhere'))).toThrow(`run ${join(dir, 'nowhere')} does not exist`);
    const r = run({ 'proposals.json': '[]' });
    expect(() => loadRun(r)).toThrow(`${r} is not a replay run (no run.json)`);
    write(join(r, 'run.json'), JSON.stringify({ format: RUN_FORMAT, fixture: { id: 'f', name: 'x', tag: 'replay-x', site: 's1', cutMs: 0, untilMs: 1 }, agent: { label: 'default', rules: [] } }));
    expect(() => loadRun(r)).toThrow(`run ${r}: human-decisions.json is missing`);
    write(join(r, 'human-decisions.json'), '{}');
    expect(() => loadRun(r)).toThrow(`${join(r, 'human-decisions.json')} is damaged: expected a JSON array of objects`);
    write(join(r, 'human-decisions.json'), '[]');
    expect(() => loadRun(r)).toThrow(`run ${r}: decisions.json is missing`);
    write(join(r, 'decisions.json'), '[]');
    expect(() => loadRun(r)).toThrow(`run ${r}: agent-runs.json is missing`);
    write(join(r, 'agent-runs.json'), JSON.stringify([{ runId: 'r1', atMs: 1 }]));
    expect(() => loadRun(r)).toThrow(`${join(r, 'agent-runs.json')} is damaged: expected ruleErrors in every run`);
    write(join(r, 'agent-runs.json'), JSON.stringify([{ runId: 'r1', atMs: 1, ruleErrors: [{ ruleId: 'a', message: 'b' }] }]));
    expect(loadRun(r).proposals).toEqual([]);
    expect(loadRun(r).ruleErrors).toEqual({ count: 1, first: 'a: b' });
    // What the replay made of each decision (agreement reads it) has to be there for each, in order.
    write(join(r, 'human-decisions.json'), JSON.stringify([{ atMs: 5, verb: 'reject', proposalId: 'P-1', ruleId: 'a', situationKey: 'a|x' }]));
    expect(() => loadRun(r)).toThrow(`${join(r, 'decisions.json')} is damaged: expected the outcome of each of human-decisions.json's 1 decision, in order`);
    write(join(r, 'decisions.json'), JSON.stringify([{ atMs: 5, liveProposalId: 'P-1', replayOutcome: 'unmatched' }]));
    // A verb other than approve was counted as a rejection the run agreed with.
    write(join(r, 'human-decisions.json'), JSON.stringify([{ atMs: 5, verb: 'approved', proposalId: 'P-1', ruleId: 'a', situationKey: 'a|x' }]));
    expect(() => loadRun(r)).toThrow(`${join(r, 'human-decisions.json')} is damaged: entry 0: verb: expected approve, reject or defer`);
    write(join(r, 'human-decisions.json'), JSON.stringify([{ atMs: 5, verb: 'reject', proposalId: 'P-1', ruleId: 'a', situationKey: 'a|x' }]));
    expect(loadRun(r).outcomes).toHaveLength(1);
  });

  it('reports a proposal the diff cannot match (no situation key, no creation time, no evidence) as damage, naming it', () => {
    const r = run({
      'run.json': JSON.stringify({ format: RUN_FORMAT, fixture: { id: 'f', name: 'x', tag: 'replay-x', site: 's1', cutMs: 0, untilMs: 1 }, agent: { label: 'default', rules: [] } }),
      'human-decisions.json': '[]',
      'decisions.json': '[]',
      'agent-runs.json': '[]',
    });
    const p = { id: 'P-1', runId: 'r', createdAtMs: 5, ruleId: 'a', ruleVersion: '1', situationKey: 'a|x', action: 'x', module: null, params: {}, risk: 'low', riskReason: '', explanation: '', evidence: [], status: 'open', closedAtMs: null, withdrawnReason: null, decision: null };
    write(join(r, 'proposals.json'), JSON.stringify([p]));
    expect(loadRun(r).proposals).toHaveLength(1);
    // Read as it is, such an entry matched nothing: it was counted added or removed, a difference
    // the runs do not have.
    const { situationKey: _, ...keyless } = p;
    for (const [bad, what] of [
      [keyless, 'situationKey'],
      [{ ...p, createdAtMs: '5' }, 'createdAtMs'],
      [{ ...p, closedAtMs: 'soon' }, 'closedAtMs'],
      [{ ...p, evidence: undefined }, 'evidence'],
      [{ ...p, params: undefined }, 'params'],
    ] as const) {
      write(join(r, 'proposals.json'), JSON.stringify([p, bad]));
      expect(() => loadRun(r), what).toThrow(`${join(r, 'proposals.json')} is damaged: entry 1: ${what}: `);
    }
  });
});
