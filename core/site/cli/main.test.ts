// The `tilstand` dispatcher in-process: help, unknown commands, `start` refusals, and `table …` handed on.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from './main.ts';

async function run(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  const code = await main(args, { stdin: Readable.from(stdin ? [Buffer.from(stdin)] : []), stdout, stderr });
  return { code, out, err };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-main-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('tilstand', () => {
  it('prints the usage of every command for help', async () => {
    for (const h of [['help'], ['--help'], ['-h']]) {
      const r = await run(h);
      expect(r.code).toBe(0);
      expect(r.err).toBe('');
      for (const c of ['start', 'init', 'status', 'contracts list', 'contracts add', 'deadletters list', 'deadletters replay', 'users add', 'users list', 'users disable', 'demo', 'table list', 'table create', 'table put', 'table scan', 'table get', 'table snapshots', 'table tags', 'table tag create', 'table tag delete', 'table compact', 'table expire', 'table inspect', 'table drop']) {
        expect(r.out).toContain(`tilstand ${c}`);
      }
      expect(r.out).toContain('exit codes');
    }
  });

  it('prints the usage to stderr and exits 2 for an unknown or missing command', async () => {
    const r = await run(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^tilstand: unknown command 'frobnicate'/);
    expect(r.err).toContain('usage: tilstand');
    const none = await run([]);
    expect(none.code).toBe(2);
    expect(none.err).toContain('no command given');
  });

  it('start refuses a directory that is not a site (without --demo) and names the fix', async () => {
    const missing = await run(['start', '--data', join(dir, 'nope'), '--mqtt-port', '0', '--http-port', '0']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^tilstand: .* is not a Tilstand data directory .*tilstand init/);
    const bad = await run(['start', '--data', dir, '--mqtt-port', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("option '--mqtt-port': expected a port number");
    const status = await run(['status', '--data', join(dir, 'nope')]);
    expect(status.code).toBe(1);
    expect(status.err).toContain('tilstand init');
  });

  it('hands `table …` to the table command line', async () => {
    const r = await run(['table', 'list', '--warehouse', join(dir, 'nowhere')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^tilstand: warehouse .* does not exist/);
    const u = await run(['table', 'scan', 'a.b', '--warehouse', dir, '--colour=red']);
    expect(u.code).toBe(2);
    expect(u.err).toContain("unknown option '--colour' for 'table scan'");
  });
});
