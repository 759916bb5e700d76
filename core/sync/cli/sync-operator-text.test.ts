// What `tilstand sync status|now` tells the person at the PC: why sync is STALLED, in the words
// `tilstand status` uses (SYNC_PROBLEM_TEXT); that `sync now --hq <another>` starts again at the
// new target (the running site logs it; the command printed nothing); and that an S3 target's
// description — shown in status, logs and errors, kept in site.db — never carries the endpoint's
// user info or query (s3rver on 127.0.0.1).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { EMPTY_SYNC_STATUS, SYNC_PROBLEM_TEXT, SyncEngine } from '../engine.ts';
import { existingOutbox, openOutboxDb, Outbox } from '../outbox.ts';
import { openTarget, targetDescription, targetProblem } from '../targets/open.ts';
import { S3Target } from '../targets/s3.ts';
import { shownDescription, shownEndpoint } from '../targets/target.ts';
import { makeSite, startS3, type S3Fixture } from '../test-support/site-fixture.ts';
import { runSync, syncStatusLines } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-operator-'));
let s3: S3Fixture;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3.close();
  rmSync(dir, { recursive: true, force: true });
});
const sync = (...args: string[]) => runCli(runSync, args);
const WINDOW_MS = 15 * 60_000;

/** A data directory whose outbox has one step waiting since `agoMs` and nothing sent. */
function waitingOutbox(name: string, agoMs: number): string {
  const data = join(dir, name);
  mkdirSync(data);
  const db = openOutboxDb(join(data, 'site.db'));
  try {
    new Outbox(db).add([{ unit: 'site_1.db/stock@1', phase: 0, op: 'put', priority: 2, key: 'site_1.db/stock/x.parquet', src: '/nowhere', size: 10 }], Date.now() - agoMs);
  } finally {
    db.close();
  }
  return data;
}

describe('sync status says why it is STALLED', () => {
  it('in the words of tilstand status, and --json carries problems', async () => {
    const data = waitingOutbox('waiting', WINDOW_MS + 60_000);
    const r = await sync('status', '--data', data);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/^health: +STALLED \(0 steps, 0 bytes in the last window\)$/);
    // Was the next line "online: no": STALLED without why.
    expect(lines[1]).toBe(`why:              ${SYNC_PROBLEM_TEXT.waiting}`);
    const j = await sync('status', '--data', data, '--json');
    expect(j.code, j.err).toBe(0);
    expect(JSON.parse(j.out)).toMatchObject({ healthy: false, problems: ['waiting'], pendingItems: 1 });
  });

  it('says nothing of why when healthy (a step waiting less than the window)', async () => {
    const data = waitingOutbox('recent', 60_000);
    const r = await sync('status', '--data', data);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^health: +ok /);
    expect(r.out).not.toContain('why:');
  });

  it('every problem, joined most pressing first; an unknown one as it came; none: the last error', () => {
    const stalled = { ...EMPTY_SYNC_STATUS, healthy: false, lastError: 'HQ refuses this site\'s credentials: …' };
    const lines = syncStatusLines({ ...stalled, problems: ['refused', 'credentials', 'step', 'waiting', 'planning'] });
    expect(lines[1]).toBe(`why:              ${[SYNC_PROBLEM_TEXT.refused, SYNC_PROBLEM_TEXT.credentials, SYNC_PROBLEM_TEXT.step, SYNC_PROBLEM_TEXT.waiting, SYNC_PROBLEM_TEXT.planning].join('; ')}`);
    expect(syncStatusLines({ ...stalled, problems: ['quota' as never] })[1]).toBe('why:              quota');
    // An engine that gave no problems (an older one): the last error says it.
    expect(syncStatusLines({ ...stalled, problems: [] })[1]).toBe('why:              the last error below');
    expect(syncStatusLines({ ...stalled, problems: [] }).at(-1)).toBe("last error:       HQ refuses this site's credentials: …");
  });

  it('one step, one byte in the singular', () => {
    const lines = syncStatusLines({ ...EMPTY_SYNC_STATUS, recentItems: 1, recentBytes: 1, pendingItems: 1, pendingBytes: 2 });
    expect(lines[0]).toBe('health:           ok (1 step, 1 byte in the last window)');
    expect(lines[2]).toBe('pending:          1 step, 2 bytes');
  });

  it('the words are those tilstand status prints (core/site formatStatus reads the same table)', () => {
    expect(SYNC_PROBLEM_TEXT).toEqual({
      refused: 'HQ refuses this PC: another PC sends for this site, docs/operations.md "Two PCs for one site"',
      gone: "HQ no longer holds this site's sender marker: is HQ's share mounted, or was HQ's copy deleted? Nothing is sent until it is back; `tilstand sync now --take-over` sends everything again if it was removed on purpose (docs/operations.md \"HQ's folder is empty\")",
      credentials: "HQ refuses this site's credentials: check its access key and HQ's policy for the site, or, for a directory HQ, that the site's user may write its folder (the last error says what was refused)",
      step: 'a step has failed for the whole health window while HQ took other requests',
      waiting: 'nothing reached HQ within the health window',
      planning: 'a table or contract file has been left out of sending for the whole health window',
    });
  });
});

describe('sync now with another --hq', () => {
  it('prints that the target changed and everything is sent again (stderr with --json)', async () => {
    const fx = makeSite('4', { rows: 20, data: join(dir, 'site-4') });
    const hqA = join(dir, 'hq-a');
    const hqB = join(dir, 'hq-b');
    const hqC = join(dir, 'hq-c');
    const first = await sync('now', '--data', fx.data, '--hq', hqA);
    expect(first.code, first.err).toBe(0);
    expect(first.out).not.toContain('target changed');
    const again = await sync('now', '--data', fx.data, '--hq', hqA);
    expect(again.out).not.toContain('target changed');
    const moved = await sync('now', '--data', fx.data, '--hq', hqB);
    expect(moved.code, moved.err).toBe(0);
    // Was only "planned … units" and the status: the resend to the new target unexplained.
    expect(moved.out.split('\n')[0]).toMatch(new RegExp(`^sync: the target changed from dir:${hqA} to dir:${hqB}: \\d+ steps of the old one dropped; everything is sent again$`));
    const json = await sync('now', '--data', fx.data, '--hq', hqC, '--json');
    expect(json.code, json.err).toBe(0);
    expect(json.err).toMatch(new RegExp(`^sync: the target changed from dir:${hqB} to dir:${hqC}: \\d+ steps of the old one dropped; everything is sent again\\n$`));
    expect(JSON.parse(json.out)).toMatchObject({ pendingItems: 0 });
  });
});

describe("an S3 target's description", () => {
  const withUser = () => s3.endpoint.replace('http://', 'http://minio-user:hunter2-pass@');

  it('names the endpoint without its user info, query or fragment', () => {
    expect(shownEndpoint('http://u:p@127.0.0.1:9000')).toBe('http://127.0.0.1:9000');
    expect(shownEndpoint('https://u:p@ss@host:443/base?X-Amz-Signature=abc#f')).toBe('https://host:443/base');
    expect(shownEndpoint('u:p@host:9000')).toBe('host:9000');
    // As written otherwise: a normalised text would read as another target.
    expect(shownEndpoint('https://Host:443/path@x')).toBe('https://Host:443/path@x');
    const t = new S3Target({ bucket: 'hq', root: 'p/', endpoint: 'http://AKIAKEY:s3cret@127.0.0.1:9000/?token=t0ken', accessKeyId: 'a', secretAccessKey: 'b' });
    // Was "s3://hq/p/ (http://AKIAKEY:s3cret@127.0.0.1:9000/?token=t0ken)".
    expect(t.description).toBe('s3://hq/p/ (http://127.0.0.1:9000/)');
    // Such a target is not opened at all now (target-user-info.test.ts); the S3Target's own
    // description above still leaves user info out for whoever constructs one.
    expect(() => openTarget(`s3://hq/?endpoint=${encodeURIComponent('http://AKIAKEY:s3cret@127.0.0.1:9000')}`, { accessKey: 'a', secretKey: 'b' })).toThrow(/carries keys in its endpoint \(http:\/\/…@127\.0\.0\.1:9000\)/);
    return t.close();
  });

  it('sync now refuses an endpoint with user info, exit 2, and never shows it; without it, site.db keeps the description (s3rver on loopback)', async () => {
    const fx = makeSite('5', { rows: 20, data: join(dir, 'site-5') });
    // Was accepted, its user info left out of the description only.
    const refused = await sync('now', '--data', fx.data, '--hq', `s3://${s3.bucket}/?endpoint=${encodeURIComponent(withUser())}`, '--access-key', 'S3RVER', '--secret-key', 'S3RVER');
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('carries keys in its endpoint');
    expect(existsSync(join(fx.data, 'site.db')), 'the outbox was opened').toBe(false);
    const r = await sync('now', '--data', fx.data, '--hq', `s3://${s3.bucket}/?endpoint=${encodeURIComponent(s3.endpoint)}`, '--access-key', 'S3RVER', '--secret-key', 'S3RVER');
    expect(r.code, r.err).toBe(0);
    const db = openOutboxDb(join(fx.data, 'site.db'), true);
    try {
      expect(existingOutbox(db)?.getState('target')).toBe(`s3://${s3.bucket}/ (${s3.endpoint})`);
    } finally {
      db.close();
    }
    // A bucket HQ does not have: the error names the target.
    const bad = await sync('now', '--data', fx.data, '--hq', `s3://no-such-bucket/?endpoint=${encodeURIComponent(s3.endpoint)}`, '--access-key', 'S3RVER', '--secret-key', 'S3RVER', '--max-rounds', '1');
    const all = [refused.out, refused.err, r.out, r.err, bad.out, bad.err].join('\n');
    // Was "last error: SyncError: put site_5.db/.tilstand/sender.json: not found", as if a file were missing.
    expect(bad.out).toContain(`put site_5.db/.tilstand/sender.json: s3://no-such-bucket/ (${s3.endpoint}): no such bucket (check the bucket the s3:// URL names)`);
    expect(all).not.toContain('hunter2');
    expect(all).not.toContain('minio-user');
  });

  it('a description kept with the user info by an older version is the same target: nothing resent, site.db rewritten', async () => {
    const fx = makeSite('6', { rows: 20, data: join(dir, 'site-6') });
    // The user info taken out of the target (an endpoint with it is refused now), the outbox still
    // holding the description an older version kept with it.
    const target = () => openTarget(`s3://${s3.bucket}/?endpoint=${encodeURIComponent(s3.endpoint)}`, { site: '6', accessKey: 'S3RVER', secretKey: 'S3RVER' });
    const t1 = target();
    const e1 = new SyncEngine({ dataDir: fx.data, site: '6', target: t1 });
    try {
      await e1.syncNow(3);
      // As an older version wrote it.
      e1.outbox.setState('target', `s3://${s3.bucket}/ (${withUser()})`);
    } finally {
      await e1.close();
      await t1.close();
    }
    expect(shownDescription(`s3://${s3.bucket}/ (${withUser()})`)).toBe(`s3://${s3.bucket}/ (${s3.endpoint})`);
    const logged: string[] = [];
    const t2 = target();
    const e2 = new SyncEngine({ dataDir: fx.data, site: '6', target: t2, log: (l) => logged.push(l) });
    try {
      expect(e2.targetChanged).toBeUndefined();
      expect(logged.filter((l) => l.includes('target changed'))).toEqual([]);
      expect(e2.outbox.getState('target')).toBe(`s3://${s3.bucket}/ (${s3.endpoint})`);
      const r = await e2.syncNow(3);
      expect(r.sentBytes).toBe(0); // was everything again
    } finally {
      await e2.close();
      await t2.close();
    }
  });
});

describe("an s3:// target's parameters", () => {
  const keys = { accessKey: 'a', secretKey: 'b' };
  it('refuses one it does not know, one given twice, an empty one and an endpoint that is no http(s) URL', () => {
    const takes = 'endpoint=<http:// or https:// URL> and region=<name>';
    const cases: [string, string][] = [
      // Was ignored: the site sent to AWS.
      ['s3://hq/?endpiont=http://127.0.0.1:9000', `s3:// target: unknown parameter 'endpiont' (it takes ${takes})`],
      ['s3://hq/?Endpoint=http://127.0.0.1:9000', `s3:// target: unknown parameter 'Endpoint' (it takes ${takes})`],
      ['s3://hq/?endpoint=http://127.0.0.1:1&endpoint=http://127.0.0.1:2', `s3:// target: parameter 'endpoint' given 2 times (once: ${takes})`],
      // Was AWS: an unset variable (`endpoint=$ENDPOINT`).
      ['s3://hq/?endpoint=', `s3:// target: parameter 'endpoint' is empty (it takes ${takes}; leave it out for AWS)`],
      ['s3://hq/?endpoint=http://127.0.0.1:9&region=', `s3:// target: parameter 'region' is empty (it takes ${takes}; leave it out for AWS)`],
      // Was a Transport error at every request ("TypeError: Invalid URL"), retried for ever.
      ['s3://hq/?endpoint=127.0.0.1:9000', "s3:// target: endpoint must be an http:// or https:// URL (endpoint=http://host:9000), got '127.0.0.1:9000'"],
      [`s3://hq/?endpoint=${encodeURIComponent('u:pw@127.0.0.1:9000')}`, "s3:// target: endpoint must be an http:// or https:// URL (endpoint=http://host:9000), got '127.0.0.1:9000'"],
      ['s3://hq/?endpoint=ftp://u:pw@127.0.0.1:21', "s3:// target: endpoint must be an http:// or https:// URL (endpoint=http://host:9000), got 'ftp://127.0.0.1:21'"],
    ];
    for (const [text, message] of cases) {
      expect(() => openTarget(text, keys), text).toThrow(message);
      expect(targetProblem(text), text).toBe(message);
    }
    for (const ok of ['s3://hq/', 's3://hq/p?endpoint=http://127.0.0.1:9000&region=eu-north-1', `s3://hq/?endpoint=${encodeURIComponent('https://host:443/base')}`]) {
      expect(targetProblem(ok), ok).toBeUndefined();
    }
  });

  it("refuses a prefix whose '%' starts no %XX, saying to write it %25; a %25 is a '%' of the prefix", () => {
    // Was a bare "URI malformed" (decodeURIComponent's URIError), in config check too.
    const message = "'s3://hq/50%off/' has a prefix that is not percent-encoded UTF-8: a '%' must start %XX (a '%' in the prefix is written %25)";
    expect(() => openTarget('s3://hq/50%off/?endpoint=http://127.0.0.1:9000', keys)).toThrow(message);
    expect(targetProblem('s3://hq/50%off/')).toBe(message);
    expect(targetProblem('s3://hq/a%FF/')).toBe(message.replace('50%off', 'a%FF'));
    expect(targetProblem('s3://hq/50%25off/')).toBeUndefined();
    expect(targetDescription('s3://hq/50%25off/')).toBe('s3://hq/50%off/');
  });

  it('sync now refuses it, exit 2, before HQ is reached', async () => {
    const data = join(dir, 'config-only');
    mkdirSync(data);
    writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site: '8', hq: { target: null } }));
    const r = await sync('now', '--data', data, '--hq', 's3://hq/?endpiont=http://127.0.0.1:9000', '--access-key', 'a', '--secret-key', 'b');
    expect([r.code, r.out, r.err]).toEqual([2, '', "tilstand: s3:// target: unknown parameter 'endpiont' (it takes endpoint=<http:// or https:// URL> and region=<name>)\n"]);
    expect(existsSync(join(data, 'site.db')), 'the outbox was opened').toBe(false);
  });
});

describe('sync now says why it failed', () => {
  it('no HQ anywhere: names config.json and --hq', async () => {
    const data = join(dir, 'no-hq');
    mkdirSync(data);
    writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site: '9', hq: { target: null } }));
    const r = await sync('now', '--data', data);
    // Was "option '--hq' is required: a directory or s3://bucket/prefix?endpoint=…", as if only the flag were missing.
    expect([r.code, r.out, r.err]).toEqual([
      2,
      '',
      `tilstand: option '--hq' is required: config.json names no HQ target (hq.target) and the site has not synced from this directory; give --hq <dir|s3://bucket/prefix?endpoint=…>, or set hq.target in ${join(data, 'config.json')}\n`,
    ]);
  });

  it('steps left pending (exit 5) are said on stderr, --json too', async () => {
    const fx = makeSite('10', { rows: 20, data: join(dir, 'site-10') });
    // HQ's folder of the site is a file: every step fails (an --hq that is a file is refused as a usage error).
    const hq = join(dir, 'hq-site-folder-is-a-file');
    mkdirSync(hq);
    writeFileSync(join(hq, 'site_10.db'), 'x');
    const pending = await sync('now', '--data', fx.data, '--hq', hq, '--max-rounds', '1', '--json');
    expect(pending.code).toBe(5);
    const s = JSON.parse(pending.out);
    expect(s.pendingItems).toBeGreaterThan(0);
    // Was nothing on stderr: exit 5 with no word of why.
    expect(pending.err).toBe(`tilstand: ${s.pendingItems} steps still pending after 1 round (--max-rounds allows more): the last error says what holds them\n`);
  });

  it('a refusal by HQ (exit 3) is said on stderr', async () => {
    const fx = makeSite('11', { rows: 20, data: join(dir, 'site-11') });
    const hq = join(dir, 'hq-shared');
    expect((await sync('now', '--data', fx.data, '--hq', hq)).code).toBe(0);
    // Another data directory of the same site: HQ's sender marker names the first.
    const copy = makeSite('11', { rows: 20, data: join(dir, 'site-11-copy') });
    const refused = await sync('now', '--data', copy.data, '--hq', hq);
    expect(refused.code).toBe(3);
    expect(refused.out).toMatch(/last error: +HQ's site_11\.db\/ belongs to another sender/);
    // Was nothing on stderr.
    expect(refused.err).toBe("tilstand: nothing was sent: HQ's sender marker names another data directory for site 11 (the last error says which; --take-over makes this directory the sender)\n");
  });
});
