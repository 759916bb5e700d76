// The demo's yard module runs only where the data directory's config.json defines yard_doors (a
// `tables` entry with columns) and a binding writes it, for `tilstand demo` and for `tilstand start
// --demo` alike; elsewhere the four seed modules run and one line says why. `tilstand demo` ran it
// whenever its broker user existed, and `start --demo` whenever the table did, binding or not: the
// site then dead-lettered every door event.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from './cli/main.ts';
import { DEMO_CONTRACTS, DEMO_EXTRA_MODULES, demoConfig } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-demo-yard-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A demo data directory as `tilstand start --demo` makes one (yard user, contract, table, binding). */
async function demoDir(name: string): Promise<string> {
  const data = join(dir, name);
  await initDataDir({ data, site: 'demo', scrypt: FAST, config: (c) => demoConfig(c), admin: DEMO_ADMIN, modules: DEMO_EXTRA_MODULES, contracts: DEMO_CONTRACTS });
  return data;
}

/** Edits config.json in `data` as someone editing the file does. */
function editConfig(data: string, f: (c: { tables: { table: string }[]; bindings: { table: string }[] }) => void): void {
  const file = join(data, 'config.json');
  const c = JSON.parse(readFileSync(file, 'utf8'));
  f(c);
  writeFileSync(file, JSON.stringify(c, null, 2));
}

/** `tilstand demo --data <data>` against no broker, stopped (SIGINT) once it says it publishes. */
async function demo(data: string): Promise<{ code: number; out: string; err: string; modules: string[] }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  let stopped = false;
  stdout.on('data', (d) => {
    out += d;
    if (!stopped && out.includes('publishing to')) {
      stopped = true;
      process.emit('SIGINT', 'SIGINT');
    }
  });
  stderr.on('data', (d) => (err += d));
  const code = await main(['demo', '--data', data, '--mqtt-url', 'mqtt://127.0.0.1:1', '--step-ms', '60000'], { stdin: Readable.from([]), stdout, stderr });
  // The stop lines: `  <module>: n/m acknowledged, …`, one per module run.
  const modules = [...out.matchAll(/^ {2}(\w+): \d+\/\d+ acknowledged/gm)].map((m) => m[1]!);
  return { code, out, err, modules };
}

const SEED = ['operations', 'inventory', 'commerce', 'procurement'];
const noYardLine = (out: string) => out.split('\n').filter((l) => /yard module/.test(l));

describe('tilstand demo: the yard module from config.json', () => {
  it('runs five modules on a demo directory, the four seed modules where config.json lost the yard_doors binding or table, saying why', async () => {
    const data = await demoDir('demo');
    const normal = await demo(data);
    expect([normal.code, normal.modules, noYardLine(normal.out)]).toEqual([0, [...SEED, 'yard'], []]);

    // The table kept, its binding gone: no stream writes yard_doors.
    editConfig(data, (c) => (c.bindings = c.bindings.filter((b) => b.table !== 'yard_doors')));
    const unbound = await demo(data);
    expect([unbound.code, unbound.modules]).toEqual([0, SEED]);
    expect(noYardLine(unbound.out)).toEqual(['tilstand demo: the yard module does not run here (no binding in config.json writes yard_doors); a new demo directory has it']);

    // The table's entry gone as well.
    editConfig(data, (c) => (c.tables = c.tables.filter((t) => t.table !== 'yard_doors')));
    const untabled = await demo(data);
    expect([untabled.code, untabled.modules]).toEqual([0, SEED]);
    expect(noYardLine(untabled.out)).toEqual([
      'tilstand demo: the yard module does not run here (no yard_doors table (a tables entry with columns) in config.json; no binding in config.json writes yard_doors); a new demo directory has it',
    ]);

    // A config.json that cannot be read does not stop the seed modules.
    writeFileSync(join(data, 'config.json'), '{ not json');
    const unread = await demo(data);
    expect([unread.code, unread.modules]).toEqual([0, SEED]);
    expect(noYardLine(unread.out)).toEqual([expect.stringMatching(/^tilstand demo: the yard module does not run here \(config\.json cannot be read: /)]);
  }, 60_000);
});

describe('tilstand start --demo: the yard module from config.json', () => {
  it('runs the four seed modules where no binding writes yard_doors, with one line saying why', async () => {
    const data = await demoDir('demo');
    editConfig(data, (c) => (c.bindings = c.bindings.filter((b) => b.table !== 'yard_doors')));
    const logged: string[] = [];
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, demoStepMs: 60_000, log: (l) => logged.push(l) });
    try {
      expect(site.status().demo!.map((d) => d.module)).toEqual(SEED);
      expect(logged.filter((l) => /yard module/.test(l))).toEqual(['demo: the yard module does not run here (no binding in config.json writes yard_doors); a new demo directory has it']);
    } finally {
      await site.stop();
    }
  }, 60_000);
});
