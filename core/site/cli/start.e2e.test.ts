// `tilstand start --demo` as a child process on a temp data directory with ephemeral ports:
// polled with `tilstand status --json` until the state tables have rows, synced to its stand-in
// HQ, then SIGTERM → exit 0.

import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { SiteStatus } from '../status.ts';
import { missingLaunchSettings, SITE_LAUNCH } from '../v8-flags.ts';

const BIN = resolve(import.meta.dirname, '../../../bin/tilstand.mjs');
const run = promisify(execFile);

let dir: string | undefined;
let child: ReturnType<typeof spawn> | undefined;
afterEach(() => {
  if (child && child.exitCode === null && child.pid) child.kill('SIGKILL');
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('tilstand start --demo (child process)', () => {
  it('comes up on a fresh directory, shows rows and freshness in status --json, and exits 0 on SIGTERM', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-start-'));
    const data = join(dir, 'data');
    // Started as developers start it (no launch settings: the start-up lines say so).
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
    for (const k of Object.keys(SITE_LAUNCH.env)) delete env[k];
    child = spawn(process.execPath, [BIN, 'start', '--demo', '--headless', '--data', data, '--mqtt-port', '0', '--http-port', '0', '--demo-step-ms', '100'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));

    let status: SiteStatus | undefined;
    const end = Date.now() + 50_000;
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, 500));
      if (!out.includes('mqtt:')) continue;
      const r = await run(process.execPath, [BIN, 'status', '--json', '--data', data]).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
      try {
        status = JSON.parse(r.stdout) as SiteStatus;
      } catch {
        continue;
      }
      if (status.running && ['work_queue', 'resources', 'stock'].every((t) => (status!.tables.find((x) => x.table === t)?.rows ?? 0) > 0)) break;
    }
    expect(status, `stdout:\n${out}\nstderr:\n${err}`).toBeDefined();
    expect(status!.running).toBe(true);
    // The approval inbox first (the agent's timers run: it is kept current), then ingest's tables.
    expect(status!.tables.map((t) => t.table)).toEqual(['approval_inbox', 'work_queue', 'resources', 'stock', 'yard_doors', 'dead_letters']);
    for (const t of status!.tables) expect(t.withinBudget, t.table).toBe(true);
    expect(status!.tables.find((t) => t.table === 'resources')!.rows).toBe(6);
    expect(out).toMatch(/mqtt:\s+mqtt:\/\/127\.0\.0\.1:(\d+)/);
    const httpUrl = /http:\s+(http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(out)![1]!;
    expect(Number(/:(\d+)$/.exec(httpUrl)![1])).toBeGreaterThan(0);
    expect(out).toContain(`ui:      ${httpUrl}/`);
    expect(out).toContain("demo:    simulated modules publishing: operations, inventory, commerce, procurement, yard (its dock doors fill yard_doors, a table of the site's own)");
    expect(out).toMatch(/headless|Electron/);
    expect(out).toContain(`memory:  started without ${missingLaunchSettings([], env).join(' ')}: a higher peak RSS`);
    // With the command that starts it with them (the node flags after node, the variables before it), as it was started.
    const missing = missingLaunchSettings([], env);
    const launch = [...missing.filter((w) => !w.startsWith('-')), 'node', ...missing.filter((w) => w.startsWith('-'))];
    expect(out).toContain(`start it with them (as \`npm start\` does): ${launch.join(' ')} bin/tilstand.mjs start --demo --headless --data ${data} `);
    const metrics = await (await fetch(`${httpUrl}/metrics`)).text();
    expect(metrics).toContain('tilstand_ingest_table_age_ms');
    expect(metrics).toMatch(/^tilstand_inbox_age_ms\{site="demo"\} \d+$/m);
    expect(metrics).toMatch(/^tilstand_inbox_budget_ms\{site="demo"\} 2000$/m);
    // What waits for a decision, as `tilstand status` says it (its JSON below).
    expect(metrics).toMatch(/^tilstand_proposals_waiting\{site="demo",status="open"\} \d+$/m);
    expect(metrics).toMatch(/^tilstand_proposals_waiting\{site="demo",status="deferred"\} \d+$/m);
    expect(metrics).toMatch(/^tilstand_proposals_oldest_open_seconds\{site="demo"\} \d+$/m);

    const human = await run(process.execPath, [BIN, 'status', '--data', data]);
    expect(human.stdout).toMatch(/work_queue\s+\d+/);
    expect(human.stdout).toMatch(/approval_inbox\s+\d+\s+\S+ m?s behind\s+2\.0 s/);
    expect(human.stdout).toContain('within budget');
    expect(human.stdout).toMatch(/^proposals: \d+ open.*, \d+ deferred/m);
    // The app's alarms, in the CLI too.
    expect(status!.alarms).toEqual(expect.any(Array));
    expect(human.stdout).toMatch(/^(alarms: none|ALARM \w+ \(for )/m);

    // A new demo directory syncs to a directory in it standing in for HQ, and says how to read it.
    const hq = join(data, 'demo-hq');
    expect(out).toContain(`hq:      syncing to ${hq} (a directory standing in for headquarters)`);
    expect(out).toContain(`read it as HQ does: tilstand hq tables --hq ${hq} --site demo`);
    expect(JSON.parse(readFileSync(join(data, 'config.json'), 'utf8')).hq).toEqual({ target: hq });
    await run(process.execPath, [BIN, 'sync', 'now', '--data', data]);
    const shipped = (await run(process.execPath, [BIN, 'hq', 'tables', '--hq', hq, '--site', 'demo'])).stdout.trim().split('\n');
    expect(shipped).toEqual(expect.arrayContaining(['approval_inbox', 'decision_log', 'resources', 'stock', 'work_queue']));

    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 20_000))]);
    expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe(0);
    expect(out).toContain('stopped cleanly');

    // Not running any more: status reads the directory.
    const after = JSON.parse((await run(process.execPath, [BIN, 'status', '--json', '--data', data])).stdout) as SiteStatus;
    expect(after.running).toBe(false);
    expect(after.alarms).toBeNull();
    expect(after.tables.find((t) => t.table === 'resources')!.rows).toBe(6);
    // In the order the running site listed them (the demo's own table before dead_letters; the
    // inbox's age is there only while a site's agent checks it).
    expect(after.tables.map((t) => t.table)).toEqual(status!.tables.map((t) => t.table).filter((t) => t !== 'approval_inbox'));
    expect(after.journal.uncommittedEvents).toBe('0');
  });
});
