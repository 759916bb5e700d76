// `tilstand sync now` beside a running site that syncs: the command only asks the site to sync
// (control op `sync.now`), and the site syncs with its own configuration — its HQ target and the S3
// keys of its own environment. `--access-key`/`--secret-key` typed for the command were dropped
// without a word (exit 0, the site's keys used) while the person believed theirs were; they are
// refused now, exit 2, naming the flags and how a site is given its keys. With `--take-over` they
// are used: the command writes HQ's sender marker itself. A `--take-over --hq` naming another HQ
// than the site's was refused only after the marker had been written there.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { senderMarkerKey } from '../../sync/names.ts';
import { startS3, type S3Fixture } from '../../sync/test-support/site-fixture.ts';
import { Site } from '../site.ts';
import { runMain as cli } from './test-support.ts';

const SECRET = 'typed-secret-4711';
const dirs: string[] = [];
const sites: Site[] = [];
let s3: S3Fixture;
const envKeys = { access: process.env.TILSTAND_HQ_ACCESS_KEY, secret: process.env.TILSTAND_HQ_SECRET_KEY };
const setEnvKeys = (on: boolean) => {
  for (const [name, v] of [['TILSTAND_HQ_ACCESS_KEY', 'S3RVER'], ['TILSTAND_HQ_SECRET_KEY', 'S3RVER']] as const) {
    if (on) process.env[name] = v;
    else delete process.env[name];
  }
};

beforeAll(async () => {
  s3 = await startS3();
});
afterEach(async () => {
  for (const s of sites.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  setEnvKeys(false);
});
afterAll(async () => {
  await s3.close();
  if (envKeys.access !== undefined) process.env.TILSTAND_HQ_ACCESS_KEY = envKeys.access;
  if (envKeys.secret !== undefined) process.env.TILSTAND_HQ_SECRET_KEY = envKeys.secret;
});

// A prefix of its own per test: each test's site is site demo from a data directory of its own.
const s3Target = (prefix: string) => `s3://${s3.bucket}/${prefix}?endpoint=${encodeURIComponent(s3.endpoint)}`;

async function startSite(hq: string | undefined): Promise<{ dir: string; data: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-now-flags-'));
  dirs.push(dir);
  const data = join(dir, 'data');
  const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, ...(hq === undefined ? {} : { hq }), syncIntervalMs: 600_000, agentTimer: false });
  sites.push(site);
  return { dir, data };
}

describe('sync now beside a running site: flags the site would not use', () => {
  it('S3 keys beside a site that syncs to S3: refused, exit 2, naming the flags and how the site gets its keys', async () => {
    setEnvKeys(true);
    const { data } = await startSite(s3Target('keys'));
    const puts = s3.puts.size;
    const both = await cli(['sync', 'now', '--data', data, '--access-key', 'AKIATYPED', '--secret-key', SECRET]);
    expect(both.code, both.out + both.err).toBe(2);
    expect(both.err).toContain("option '--access-key', '--secret-key'");
    expect(both.err).toContain(`the site running on ${data} syncs to s3://${s3.bucket}/keys`);
    expect(both.err).toContain('TILSTAND_HQ_ACCESS_KEY');
    expect(both.err).toContain('docs/operations.md, "Connecting to headquarters"');
    expect(both.out + both.err).not.toContain(SECRET);
    expect(both.out + both.err).not.toContain('AKIATYPED');
    // Nothing was asked of the site.
    expect(both.out).toBe('');
    expect(s3.puts.size).toBe(puts);
    const one = await cli(['sync', 'now', '--data', data, '--secret-key', SECRET]);
    expect(one.code).toBe(2);
    expect(one.err).toContain("option '--secret-key': ");
    expect(one.err).not.toContain(SECRET);
    // Without them the site syncs, with its own keys.
    const plain = await cli(['sync', 'now', '--data', data]);
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out).toContain('by the site running on');
  }, 120_000);

  it('S3 keys beside a site that syncs to a directory: refused, the directory takes none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-now-flags-hq-'));
    dirs.push(dir);
    const { data } = await startSite(join(dir, 'hq'));
    const r = await cli(['sync', 'now', '--data', data, '--access-key', 'AKIATYPED', '--secret-key', SECRET]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err).toContain(`the site running on ${data} syncs to the directory ${join(dir, 'hq')}, which takes no S3 keys`);
    expect(r.out + r.err).not.toContain(SECRET);
  }, 120_000);

  it('beside a running site without HQ target the command syncs itself, with the keys given', async () => {
    const { data } = await startSite(undefined);
    const r = await cli(['sync', 'now', '--data', data, '--hq', s3Target('no-target'), '--access-key', 'S3RVER', '--secret-key', 'S3RVER']);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).not.toContain('by the site running on');
    expect([...s3.puts.keys()].some((k) => k.startsWith('no-target/site_demo.db/'))).toBe(true);
  }, 120_000);

  it('--take-over with S3 keys: they write the marker, and a note says the site syncs with its own', async () => {
    setEnvKeys(true);
    const { data } = await startSite(s3Target('take-over'));
    const first = await cli(['sync', 'now', '--data', data]);
    expect(first.code, first.err).toBe(0);
    // The command's environment has no keys (a shell without the service's environment file).
    setEnvKeys(false);
    const r = await cli(['sync', 'now', '--data', data, '--take-over', '--hq', s3Target('take-over'), '--access-key', 'S3RVER', '--secret-key', 'S3RVER']);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toContain("HQ's sender marker for site demo now names this directory");
    expect(r.err).toContain("'--access-key', '--secret-key' wrote HQ's sender marker");
    expect(r.err).toContain('with the S3 keys of its own environment');
  }, 120_000);

  it('--take-over --hq naming another HQ than the site syncs to: refused before a marker is written there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-now-flags-hq-'));
    dirs.push(dir);
    const { data } = await startSite(join(dir, 'hq'));
    const first = await cli(['sync', 'now', '--data', data]);
    expect(first.code, first.err).toBe(0);
    const other = join(dir, 'other-hq');
    const r = await cli(['sync', 'now', '--data', data, '--take-over', '--hq', other]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err).toContain(`the site running on ${data} syncs to ${join(dir, 'hq')}, not ${other}`);
    expect(existsSync(join(other, ...senderMarkerKey('demo').split('/')))).toBe(false);
  }, 120_000);

  it('--take-over on a site started with --hq elsewhere than config.json names: refused before the marker is written at config.json\'s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-now-flags-hq-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const hq = join(dir, 'hq');
    // config.json's hq.target is <data>/demo-hq; the site was started with --hq <dir>/hq.
    const site = await Site.start({ data, demo: true, demoHq: true, hq, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, syncIntervalMs: 600_000, agentTimer: false });
    sites.push(site);
    const first = await cli(['sync', 'now', '--data', data]);
    expect(first.code, first.err).toBe(0);
    const r = await cli(['sync', 'now', '--data', data, '--take-over']);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err).toContain(`the site running on ${data} syncs to ${hq} (given with --hq at its start, or config.json edited since), not to config.json's hq.target ${join(data, 'demo-hq')}`);
    expect(existsSync(join(data, 'demo-hq', ...senderMarkerKey('demo').split('/')))).toBe(false);
    // Given the site's own target, the take-over writes the marker there.
    const taken = await cli(['sync', 'now', '--data', data, '--take-over', '--hq', hq]);
    expect(taken.code, taken.out + taken.err).toBe(0);
    expect(taken.out).toContain("HQ's sender marker for site demo now names this directory");
  }, 120_000);
});
