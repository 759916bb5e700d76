// The `tilstand` dispatcher in-process: help, unknown commands, `start` refusals, and `table …` handed on.

import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import mqtt from 'mqtt';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ContractRegistry } from '../../ingest/contracts.ts';
import { SEED_BINDINGS } from '../../ingest/seed-bindings.ts';
import { INVENTORY_STOCK, SEED_CONTRACTS } from '../../ingest/seed-contracts.ts';
import { UserStore } from '../../inbox/users.ts';
import { readModuleSecrets } from '../demo/run.ts';
import { initDataDir } from '../init.ts';
import { openSiteDb } from '../site-db.ts';
import { Site } from '../site.ts';
import { main } from './main.ts';
import { runMain as run } from './test-support.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-main-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A new site 'north' in `data`; returns an editor of its config.json. */
async function newSite(data: string): Promise<(f: (c: Record<string, any>) => void) => void> {
  await initDataDir({ data, site: 'north' });
  const file = join(data, 'config.json');
  return (f) => {
    const c = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
    f(c);
    writeFileSync(file, JSON.stringify(c, null, 2));
  };
}

describe('tilstand', () => {
  it('prints the usage of every command for help', async () => {
    for (const h of [['help'], ['--help'], ['-h']]) {
      const r = await run(h);
      expect(r.code).toBe(0);
      expect(r.err).toBe('');
      for (const c of ['start', 'init', 'status', 'config check', 'config reload', 'config changes', 'contracts list', 'contracts add', 'deadletters list', 'deadletters replay', 'users add', 'users list', 'users disable', 'users enable', 'users reset', 'modules list', 'modules password', 'demo', 'table list', 'table create', 'table put', 'table scan', 'table get', 'table snapshots', 'table tags', 'table tag create', 'table tag delete', 'table compact', 'table expire', 'table inspect', 'table drop', 'sync status', 'sync now', 'restore', 'hq sites', 'hq scan', 'hq pull', 'hq export', 'replay export', 'replay run', 'replay diff']) {
        expect(r.out).toContain(`tilstand ${c}`);
      }
      expect(r.out).toContain('exit codes');
      // 3 is more than another writer (a site already running, a user that exists, a proposal
      // decided meanwhile, a request the site or HQ refused, letters that still fail): one line.
      expect(r.out.split('\n').filter((l) => l.startsWith('exit codes'))).toEqual([
        'exit codes: 0 ok, 1 not found, 2 usage or invalid argument, 3 conflict (another writer, or not done as things stand; the message says why), 4 corruption, 5 other I/O',
      ]);
    }
  });

  it('every command group answers --help with its usage on stdout and exit 0', async () => {
    for (const [group, line] of [['sync', 'tilstand sync now'], ['hq', 'tilstand hq scan'], ['replay', 'tilstand replay run']] as const) {
      const r = await run([group, '--help']);
      expect(r.code, group).toBe(0);
      expect(r.out, group).toContain(line);
      expect(r.err, group).toBe('');
      const none = await run([group]);
      expect(none.code, group).toBe(2);
      expect(none.out, group).toBe('');
      expect(none.err, group).toContain(line);
    }
    // The site's own groups, each subcommand with the lines that explain it, and no data directory needed.
    for (const [group, lines] of [
      ['config', ['tilstand config check', 'check config.json as start reads it', 'tilstand config reload', 'tilstand config changes', 'who changed which key from the floor UI']],
      ['users', ['tilstand users list', 'tilstand users add', 'tilstand users disable', 'tilstand users enable', 'tilstand users reset']],
      ['modules', ['tilstand modules list', 'tilstand modules password', 'a new broker password for a module']],
      ['contracts', ['tilstand contracts list', 'tilstand contracts add']],
      ['deadletters', ['tilstand deadletters list', 'tilstand deadletters replay']],
    ] as const) {
      for (const help of ['--help', '-h']) {
        const r = await run([group, help, '--data', join(dir, 'nowhere')]);
        expect(r.code, `${group} ${help}`).toBe(0);
        expect(r.err, group).toBe('');
        for (const l of lines) expect(r.out, group).toContain(l);
        expect(r.out, group).not.toContain('tilstand start');
      }
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

  it('start on a new directory without --demo serves the first-run screen, then runs the site it set up', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    stdout.on('data', (d) => (out += d));
    stderr.resume();
    const data = join(dir, 'new');
    const done = main(['start', '--data', data, '--mqtt-port', '0', '--http-port', '0'], { stdin: Readable.from([]), stdout, stderr });
    const until = async (re: RegExp) => {
      for (let i = 0; i < 400 && !re.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      return re.exec(out);
    };
    const url = (await until(/first run: open (http:\/\/127\.0\.0\.1:\d+)\//))?.[1];
    expect(url, out).toBeDefined();
    type Answer = { ok: boolean; value?: unknown; error: { kind: string } };
    const post = async (method: string, body: unknown): Promise<Answer> =>
      (await (await fetch(`${url}/api/${method}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' }, body: JSON.stringify(body) })).json()) as Answer;
    // A pooled keep-alive connection to the first-run server is gone after the hand-over: retry once.
    const api = (method: string, body: unknown) => post(method, body).catch(() => post(method, body));
    expect(await api('firstRun', {})).toEqual({ ok: true, value: { initialized: false, siteId: null, restoredSite: null } });
    expect((await api('status', {})).error.kind).toBe('unauthenticated');
    expect((await api('initSite', { siteId: 'bad id', adminName: 'ada', adminPin: '4711' })).error.kind).toBe('invalid');
    expect((await api('initSite', { siteId: 'north', adminName: 'ada', adminPin: '0000' })).error).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/adminPin: PIN 0000: one digit repeated/) });
    // Set up; the site it hands over to is starting (the page waits for the site's own answer, without `starting`).
    expect(await api('initSite', { siteId: 'north', adminName: 'ada', adminPin: '2468' })).toEqual({ ok: true, value: { initialized: true, siteId: 'north', restoredSite: null, starting: true } });
    await until(/site north running from/);
    expect(out).toContain(`ui:      ${url}/`);
    // The real site now answers on the same port; initSite is refused from now on.
    expect(await api('firstRun', {})).toEqual({ ok: true, value: { initialized: true, siteId: 'north', restoredSite: null } });
    expect((await api('initSite', { siteId: 'other', adminName: 'eve', adminPin: '1111' })).error.kind).toBe('conflict');
    process.emit('SIGINT');
    expect(await done).toBe(0);
    expect(out).toContain('stopped cleanly');

    const bad = await run(['start', '--data', dir, '--mqtt-port', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("option '--mqtt-port': expected a port number");
    const status = await run(['status', '--data', join(dir, 'nope')]);
    expect(status.code).toBe(1);
    expect(status.err).toContain('tilstand init');
  }, 60_000);

  it('config reload (and SIGHUP) applies the agent, evidence, alarms, deadLetters and ui sections to a running site and names what takes a restart', async () => {
    const data = join(dir, 'r');
    const edit = await newSite(data);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let log = '';
    stdout.on('data', (d) => (out += d));
    stderr.on('data', (d) => (log += d));
    const done = main(['start', '--data', data, '--mqtt-port', '0', '--http-port', '0', '--no-agent-timer'], { stdin: Readable.from([]), stdout, stderr });
    // While the site starts, a SIGHUP is answered (not Node's default: exit at once), and the
    // reload it asks for is made once the site runs (`systemctl reload` after an edit, while the
    // start may have read the file before the edit).
    process.emit('SIGHUP');
    const until = async (text: () => string, re: RegExp) => {
      for (let i = 0; i < 400 && !re.test(text()); i++) await new Promise((r) => setTimeout(r, 50));
      return re.test(text());
    };
    expect(await until(() => out, /site north running from/), out).toBe(true);
    expect(log).toContain('tilstand: SIGHUP while the site starts: config.json is read again once it runs');
    expect(await until(() => log, /config reloaded: no change to apply/), log).toBe(true);
    try {
      expect((await run(['config', 'reload', '--data', data])).out).toBe('nothing to apply: agent, evidence, alarms, deadLetters and ui are as the site runs them\n');
      edit((c) => {
        c.agent.reorderByItem = { 'ITEM-007': { reorderPoint: 12, orderUpTo: 60 } };
        c.http.port = 9999;
      });
      const r = await run(['config', 'reload', '--data', data]);
      expect(r.err).toBe('');
      expect(r.out).toBe('applied: agent\nchanged, and taking effect at the next start: http\n');
      expect(log).toContain('tilstand: config reloaded: applied agent; http changed, taking effect at the next start');
      const stock = JSON.parse((await run(['config', 'check', '--data', data, '--json'])).out) as { agent: unknown };
      expect(stock.agent).toMatchObject({ reorderByItem: { 'ITEM-007': { reorderPoint: 12, orderUpTo: 60 } } });

      // A file that does not validate changes nothing and names the key.
      edit((c) => (c.agent.idleMsMin = -5));
      const bad = await run(['config', 'reload', '--data', data]);
      expect(bad.code).toBe(2);
      expect(bad.err).toMatch(/config agent\.idleMsMin: expected an integer ≥ 0, got -5/);

      // SIGHUP does the same (systemd's ExecReload).
      edit((c) => {
        c.agent.idleMsMin = 0;
        c.alarms.streamSilentMs = { '*': 600_000 };
      });
      process.emit('SIGHUP');
      expect(await until(() => log, /config reloaded: applied agent, alarms; http changed/), log).toBe(true);
      // A bad file by SIGHUP (`systemctl reload` says nothing to whoever ran it): refused, said
      // once on stderr and in logs/site.log, where the reload's success is said too.
      edit((c) => (c.agent.idleMsMin = -7));
      process.emit('SIGHUP');
      expect(await until(() => log, /got -7/), log).toBe(true);
      expect(log.split('\n').filter((l) => l.includes('got -7'))).toEqual(['tilstand: config not reloaded: config agent.idleMsMin: expected an integer ≥ 0, got -7']);
      expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8')).toMatch(/ config not reloaded: config agent\.idleMsMin: expected an integer ≥ 0, got -7\n/);
    } finally {
      process.emit('SIGINT');
      expect(await done).toBe(0);
    }
    expect(process.listenerCount('SIGHUP')).toBe(0);
    const stopped = await run(['config', 'reload', '--data', data]);
    expect(stopped.code).toBe(1);
    expect(stopped.err).toMatch(/no site is running on .*: the next start reads config\.json/);
  }, 60_000);

  it('config check: ok with the effective config, or the bad key named with exit 2, before a restart', async () => {
    const data = join(dir, 'd');
    const edit = await newSite(data);
    const ok = await run(['config', 'check', '--data', data]);
    expect(ok.err).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^config ok: .*config\.json \(site north\)\nagent: every 60 s; reorder point 5, up to 20\n/);

    edit((c) => (c.agent.reorderByItem = { 'ITEM-007': { reorderPoint: 12, orderUpTo: 60 } }));
    expect((await run(['config', 'check', '--data', data])).out).toContain('reorder point 5, up to 20; 1 item with a policy of its own');
    edit((c) => (c.agent.reorderByItem['ITEM-007'].locations = { 'A-01': { reorderPoint: 2, orderUpTo: 8 }, DOCK: { reorderPoint: 0, orderUpTo: 4 } }));
    expect((await run(['config', 'check', '--data', data])).out).toContain('reorder point 5, up to 20; 1 item with a policy of its own; 2 item locations with their own');
    const effective = JSON.parse((await run(['config', 'check', '--data', data, '--json'])).out) as { agent: { reorderByItem: unknown; idleMsMin: number } };
    expect(effective.agent).toMatchObject({ reorderByItem: { 'ITEM-007': { reorderPoint: 12, orderUpTo: 60 } }, idleMsMin: 900_000 });

    edit((c) => (c.agent.reorderByItem['ITEM-007'].orderUpTo = 10));
    const bad = await run(['config', 'check', '--data', data]);
    expect(bad.code).toBe(2);
    expect(bad.out).toBe('');
    expect(bad.err).toBe('tilstand: config agent.reorderByItem.ITEM-007: expected orderUpTo > reorderPoint, got 10 ≤ 12\n');

    // A file the config names must be there (start would fail on it after the restart).
    edit((c) => {
      c.agent.reorderByItem = {};
      c.http.tls = { certPath: 'tls/ui.crt', keyPath: 'tls/ui.key' };
    });
    const missing = await run(['config', 'check', '--data', data]);
    expect(missing.code).toBe(2);
    expect(missing.err).toBe(`tilstand: config http.tls.certPath: ${join(data, 'tls/ui.crt')} cannot be read (ENOENT)\n`);

    expect((await run(['config', 'show', '--data', data])).code).toBe(2);
    expect((await run(['config', 'check', '--data', join(dir, 'none')])).code).not.toBe(0);
  });

  it('refuses an empty --data (an unset variable) instead of taking the current directory', async () => {
    for (const args of [['status', '--data', ''], ['users', 'list', '--data', ' '], ['sync', 'now', '--data', '']]) {
      const r = await run(args);
      expect([args.join(' '), r.code, r.err]).toEqual([args.join(' '), 2, `tilstand: option '--data': expected the site's data directory, got '${args[args.length - 1]}'\n`]);
    }
  });

  it('config check refuses a binding that start would refuse, naming bindings[i] (exit 2), and start names it the same way', async () => {
    const data = join(dir, 'd');
    const edit = await newSite(data);
    const seed = SEED_BINDINGS.map((b) => JSON.parse(JSON.stringify(b)) as Record<string, any>);
    // Bindings of its own (CONTRACTS.md §3), as config.json takes them: fine as they are.
    edit((c) => (c.bindings = seed));
    expect((await run(['config', 'check', '--data', data])).code).toBe(0);
    // A table that does not exist.
    edit((c) => (c.bindings[1].table = 'stok'));
    const table = await run(['config', 'check', '--data', data]);
    expect([table.code, table.err]).toEqual([2, 'tilstand: config bindings[1].table: expected one of work_queue, resources, stock, dead_letters, got "stok"\n']);
    // A column the table does not have.
    edit((c) => {
      c.bindings[1].table = 'stock';
      c.bindings[1].columns.qty_reserved = 'after.reserved_qty';
    });
    const column = await run(['config', 'check', '--data', data]);
    expect([column.code, column.err]).toEqual([2, "tilstand: config bindings[1]: binding 'commerce→stock': table 'stock' has no column 'qty_reserved'\n"]);
    // A path into a field the contract (contracts/) does not have: start refused it, exit 5, naming no key.
    edit((c) => {
      delete c.bindings[1].columns.qty_reserved;
      c.bindings[1].columns.reserved = 'after.reserved';
    });
    const field = await run(['config', 'check', '--data', data]);
    const why = "config bindings[1]: binding 'commerce→stock': column 'reserved' ← 'after.reserved': contract 'commerce.reservations' has no field 'reserved'";
    expect([field.code, field.err]).toEqual([2, `tilstand: ${why}\n`]);
    const start = await run(['start', '--data', data, '--mqtt-port', '0', '--http-port', '0']);
    expect([start.code, start.err.split('\n').filter((l) => l.includes('bindings['))]).toEqual([2, [`tilstand: site north did not start: ${why}`]]);
  });

  it("config check refuses a binding that leaves its table's sequence.field unbound (rows would fall back to arrival order), and start refuses it the same way", async () => {
    const data = join(dir, 'd');
    const edit = await newSite(data);
    edit((c) => {
      c.bindings = SEED_BINDINGS.map((b) => JSON.parse(JSON.stringify(b)) as Record<string, any>);
      expect(c.bindings[3].table).toBe('work_queue');
      delete c.bindings[3].columns.ops_seq;
    });
    const why =
      "config bindings[3]: binding 'operations.jobs→work_queue': table 'work_queue' orders its rows by option 'sequence.field' = 'ops_seq', and column 'ops_seq' is not bound in columns; " +
      "expected a path giving the stream's order, usually 'ops_seq': 'source.seq' (a null sequence sorts as the oldest, so a late or replayed event would overwrite a newer row)";
    const check = await run(['config', 'check', '--data', data]);
    expect([check.code, check.err]).toEqual([2, `tilstand: ${why}\n`]);
    // start reads config.json with the same check: refused before anything is opened.
    const start = await run(['start', '--data', data, '--mqtt-port', '0', '--http-port', '0']);
    expect([start.code, start.err.split('\n').filter((l) => l.includes('bindings['))]).toEqual([2, [`tilstand: ${why}`]]);
  });

  it('config check takes a field a later contract version dropped (with a default) as the Ingestor does: still mappable', async () => {
    const data = join(dir, 'd');
    const edit = await newSite(data);
    edit((c) => (c.bindings = SEED_BINDINGS.map((b) => JSON.parse(JSON.stringify(b)) as Record<string, any>)));
    // operations.jobs v2 drops blocked_reason, which v1 declared with a default (FULL_TRANSITIVE
    // allows it) and the seed binding maps: start reads the default, so check must pass it too.
    const v1 = SEED_CONTRACTS.find((c) => c.name === 'operations.jobs')!;
    expect(v1.fields.find((f) => f.name === 'blocked_reason')).toHaveProperty('default');
    new ContractRegistry(join(data, 'contracts')).register({ ...v1, version: 2, fields: v1.fields.filter((f) => f.name !== 'blocked_reason') });
    const check = await run(['config', 'check', '--data', data]);
    expect([check.code, check.err]).toEqual([0, '']);
  });

  it('demo --step-ms and start --demo --demo-step-ms under 10 ms or over 2^31 − 1 ms are usage errors naming the option, before a demo directory is made', async () => {
    const data = join(dir, 'd');
    await newSite(data);
    const demo = await run(['demo', '--data', data, '--mqtt-url', 'mqtt://127.0.0.1:1', '--step-ms', '5']);
    expect([demo.code, demo.err]).toEqual([2, "tilstand: option '--step-ms': expected a whole number from 10 to 2147483647, got '5'\n"]);
    // Above 2^31 − 1 ms the demo's timer would fire every millisecond (Node's TimeoutOverflowWarning).
    const huge = await run(['demo', '--data', data, '--mqtt-url', 'mqtt://127.0.0.1:1', '--step-ms', '3000000000']);
    expect([huge.code, huge.err]).toEqual([2, "tilstand: option '--step-ms': expected a whole number from 10 to 2147483647, got '3000000000'\n"]);
    const fresh = join(dir, 'demo');
    const start = await run(['start', '--demo', '--headless', '--demo-step-ms', '9', '--mqtt-port', '0', '--http-port', '0', '--data', fresh]);
    expect([start.code, start.err]).toEqual([2, "tilstand: option '--demo-step-ms': expected a whole number from 10 to 2147483647, got '9'\n"]);
    expect(existsSync(fresh), 'a demo data directory was made').toBe(false);
  }, 60_000);

  it('refuses an argument a site command does not take (exit 2, as `tilstand table` does) instead of ignoring it', async () => {
    const data = join(dir, 'd');
    await newSite(data);
    const fresh = join(dir, 'new');
    for (const [args, command, extra] of [
      [['status', 'x', '--data', data], 'status', 'x'],
      [['config', 'check', 'x', '--data', data], 'config', 'x'],
      [['users', 'list', 'x', '--data', data], 'users', 'x'],
      [['contracts', 'list', 'x', '--data', data], 'contracts', 'x'],
      [['modules', 'list', 'x', '--data', data], 'modules', 'x'],
      // meant --id 17: ignored, it would replay every open letter
      [['deadletters', 'replay', '17', '--data', data], 'deadletters', '17'],
      [['sync', 'now', 'x', '--data', data], 'sync now', 'x'],
      [['sync', 'status', 'x', '--data', data], 'sync status', 'x'],
      [['restore', 'x', '--data', fresh, '--site', 'south', '--hq', join(dir, 'no-hq')], 'restore', 'x'],
      [['init', 'x', '--data', fresh, '--site', 'south'], 'init', 'x'],
      // A bad option after it, so that without the check these refuse instead of running a site or the demo.
      [['start', 'x', '--data', data, '--mqtt-port', 'none'], 'start', 'x'],
      [['demo', 'x', '--data', data, '--mqtt-url', 'none'], 'demo', 'x'],
    ] as const) {
      const r = await run([...args]);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', `tilstand: '${command}': unexpected argument '${extra}'\n`]);
    }
    expect(existsSync(fresh)).toBe(false);
    // --help still wins, and `--` makes no difference.
    expect((await run(['status', 'x', '--help'])).code).toBe(0);
    expect((await run(['status', '--data', data, '--', 'x'])).code).toBe(2);
  });

  it('start: a start that fails says why once, and the log says it as its last line', async () => {
    const data = join(dir, 'd');
    await newSite(data);
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    try {
      const port = (taken.address() as AddressInfo).port;
      const r = await run(['start', '--data', data, '--mqtt-port', String(port), '--http-port', '0']);
      expect(r.code).toBe(5);
      const why = `site north did not start: broker: cannot listen on port ${port} (--mqtt-port): listen EADDRINUSE`;
      expect(r.err.split('\n').filter((l) => l.includes('cannot listen'))).toEqual([expect.stringContaining(`tilstand: ${why}`)]);
      const log = readFileSync(join(data, 'logs', 'site.log'), 'utf8').trimEnd().split('\n');
      expect(log.at(-1)).toContain(why);
      expect(log.some((l) => / site stopped$/.test(l))).toBe(false);
    } finally {
      await new Promise((r) => taken.close(r));
    }
    // A refusal before the site opens (a bad config.json) is not in the log: printed, once, as ever.
    const edit = await newSite(join(dir, 'e'));
    edit((c) => (c.tables[0].budgetMs = '60s'));
    const bad = await run(['start', '--data', join(dir, 'e'), '--mqtt-port', '0', '--http-port', '0']);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe('tilstand: config tables[0].budgetMs: expected an integer from 100 to 604800000, got "60s"\n');
  });

  it('start: a taken --http-port or --mqtt-port is an error naming the option and the port, with --demo and on the first-run screen', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = String((taken.address() as AddressInfo).port);
    /** `tilstand start …`; one that came up (on another port) is stopped, and its output returned. */
    const start = async (args: string[]) => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let out = '';
      let err = '';
      stdout.on('data', (d) => (out += d));
      stderr.on('data', (d) => (err += d));
      let code: number | undefined;
      const done = main(['start', ...args], { stdin: Readable.from([]), stdout, stderr }).then((c) => (code = c));
      for (let i = 0; i < 600 && code === undefined && !out.includes('running from') && !out.includes('first run: open'); i++) await new Promise((r) => setTimeout(r, 50));
      if (code === undefined) {
        process.emit('SIGINT');
        await done;
        return { code: 'running', err: out };
      }
      return { code, err };
    };
    try {
      for (const [flag, what] of [['--http-port', 'http'], ['--mqtt-port', 'broker']] as const) {
        const other = flag === '--http-port' ? '--mqtt-port' : '--http-port';
        const r = await start(['--demo', '--data', join(dir, `demo${flag}`), flag, port, other, '0', '--no-agent-timer']);
        expect([r.code, r.err], flag).toEqual([5, expect.stringContaining(`tilstand: site demo did not start: ${what}: cannot listen on port ${port} (${flag}): listen EADDRINUSE`)]);
      }
      const first = await start(['--data', join(dir, 'new'), '--http-port', port]);
      expect([first.code, first.err]).toEqual([5, expect.stringContaining(`tilstand: http: cannot listen on port ${port} (--http-port): listen EADDRINUSE`)]);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  }, 60_000);

  it('start: a start that fails while opening its files (a damaged journal.db) ends the log with why, printed once', async () => {
    const data = join(dir, 'd');
    await newSite(data);
    writeFileSync(join(data, 'journal.db'), Buffer.alloc(8192, 0x5a));
    const r = await run(['start', '--data', data, '--mqtt-port', '0', '--http-port', '0']);
    expect(r.code).not.toBe(0);
    const why = 'site north did not start: journal file';
    expect(r.err.split('\n').filter((l) => l.includes('is corrupt'))).toEqual([expect.stringContaining(`tilstand: ${why}`)]);
    const log = readFileSync(join(data, 'logs', 'site.log'), 'utf8').trimEnd().split('\n');
    expect(log.at(-1)).toMatch(/ site north did not start: journal file .*journal\.db is corrupt \(open\): file is not a database$/);
  });

  it('contracts add: a contract file with a JSON syntax error is refused with its line and column', async () => {
    const data = join(dir, 'd');
    await newSite(data);
    const file = join(dir, 'inventory.stock.v2.json');
    writeFileSync(file, '{\n  "name": "inventory.stock",\n  "version": 2,\n  "fields": [\n    { "name": "item", "type": "STRING NOT NULL", }\n  ]\n}\n');
    const r = await run(['contracts', 'add', '--data', data, '--file', file]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^tilstand: cannot read a contract from ${file}: not valid JSON: .* \\(line 5, column 50\\)\n$`));
    // A message that quotes the text around the error instead stays on one line.
    writeFileSync(file, '{\n  "fields": [\n    1,\n  ]\n}\n');
    const token = await run(['contracts', 'add', '--data', data, '--file', file]);
    expect(token.err.trimEnd().split('\n')).toHaveLength(1);
    expect(token.err).toContain(`not valid JSON: Unexpected token ']'`);
    const none = await run(['contracts', 'add', '--data', data, '--file', join(dir, 'none.json')]);
    expect(none.err).toMatch(/cannot read a contract from .*none\.json: ENOENT/);
  });

  it('config changes: who changed which key from the floor UI, newest first', async () => {
    const data = join(dir, 'changes');
    await newSite(data);
    expect((await run(['config', 'changes', '--data', data])).out).toBe('no changes made from the floor UI\n');
    // Two changes on a running site (as the Stock screen makes them), read after it stopped.
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, agentTimer: false, ui: false });
    try {
      site.setReorderPolicy('Lena', 'ITEM-001', 'A-01', { reorderPoint: 9, orderUpTo: 30 });
      site.setReorderPolicy('Per', 'ITEM-001', null, { reorderPoint: 40, orderUpTo: 150 });
    } finally {
      await site.stop();
    }
    const r = await run(['config', 'changes', '--data', data]);
    expect(r.err).toBe('');
    expect(r.out).toMatch(
      /^\S+Z {2}Per {2}agent\.reorderByItem\.ITEM-001: not set → \{"reorderPoint":40,"orderUpTo":150\}\n\S+Z {2}Lena {2}agent\.reorderByItem\.ITEM-001\.locations\.A-01: not set → \{"reorderPoint":9,"orderUpTo":30\}\n$/,
    );
    const one = JSON.parse((await run(['config', 'changes', '--data', data, '--limit', '1', '--json'])).out) as Array<{ user: string }>;
    expect(one.map((c) => c.user)).toEqual(['Per']);
    expect((await run(['config', 'changes', '--data', data, '--limit', 'x'])).code).toBe(2);
    // 0 would list nothing, and look like "no changes".
    expect(await run(['config', 'changes', '--data', data, '--limit', '0'])).toMatchObject({ code: 2, err: expect.stringContaining("option '--limit': expected a whole number ≥ 1, got '0'") });
  });

  it('users reset: a new PIN for a user who forgot it, the lockout lifted; a guessable PIN, a missing user and both kinds at once refused', async () => {
    const data = join(dir, 'd');
    await newSite(data);
    expect((await run(['users', 'add', '--data', data, '--name', 'Lena', '--role', 'shift_lead', '--pin', '4827'])).code).toBe(0);
    const db = openSiteDb(join(data, 'site.db'));
    try {
      const users = new UserStore(db);
      for (let i = 0; i < 5; i++) expect((await users.verifyPin('Lena', '0000')).ok).toBe(false);
      expect(await users.verifyPin('Lena', '4827')).toMatchObject({ ok: false, reason: 'locked' });
      const r = await run(['users', 'reset', '--data', data, '--name', 'Lena', '--pin', '5938']);
      expect([r.code, r.out, r.err]).toEqual([0, 'new PIN set for Lena; it replaces their password, if they had one; a lockout is lifted\n', '']);
      expect(await users.verifyPin('Lena', '5938')).toMatchObject({ ok: true });
      expect(await users.verifyPin('Lena', '4827')).toMatchObject({ ok: false, reason: 'wrong' });
    } finally {
      db.close();
    }
    const easy = await run(['users', 'reset', '--data', data, '--name', 'Lena', '--pin', '1234']);
    expect([easy.code, easy.err]).toEqual([2, expect.stringContaining("option '--pin': PIN 1234")]);
    const nobody = await run(['users', 'reset', '--data', data, '--name', 'Nobody', '--pin', '5938']);
    expect([nobody.code, nobody.err]).toEqual([1, "tilstand: user 'Nobody' does not exist\n"]);
    const both = await run(['users', 'reset', '--data', data, '--name', 'Lena', '--pin', '5938', '--password', 'a long passphrase']);
    expect([both.code, both.err]).toEqual([2, "tilstand: users reset: give exactly one of '--pin' or '--password'\n"]);
  });

  it('users add refuses a name with an invisible character or like an existing one; users list shows the odd characters of a name an older version took', async () => {
    const data = join(dir, 'd');
    await newSite(data);
    const zw = await run(['users', 'add', '--data', data, '--name', 'ola\u200B', '--role', 'operator', '--pin', '4827']);
    expect([zw.code, zw.err]).toEqual([2, 'tilstand: user name "ola\u200B": must not contain U+200B, an invisible or direction-changing character\n']);
    expect((await run(['users', 'add', '--data', data, '--name', 'Anna', '--role', 'operator', '--pin', '4827'])).code).toBe(0);
    const like = await run(['users', 'add', '--data', data, '--name', 'anna', '--role', 'operator', '--pin', '4827']);
    expect([like.code, like.err]).toEqual([3, expect.stringContaining(`user name "anna" looks like the existing user 'Anna'`)]);
    // A row as an older version wrote it.
    const db = openSiteDb(join(data, 'site.db'));
    try {
      db.prepare("INSERT INTO users (name, role, pin_hash, created_at_ms) VALUES ('per\u200B', 'operator', NULL, 0)").run();
    } finally {
      db.close();
    }
    const list = (await run(['users', 'list', '--data', data])).out.split('\n');
    expect(list.find((l) => l.startsWith('Anna  '))).not.toContain('(name');
    expect(list.find((l) => l.startsWith('per\u200B  '))).toContain('(name "per<U+200B>": must not contain U+200B, an invisible or direction-changing character; kept for this user, refused for a new one)');
  });

  it('modules password: a new broker password for a module, stored as a hash and printed once; the running broker takes it at the next connection', async () => {
    const data = join(dir, 'd');
    const edit = await newSite(data);
    const secretsFile = join(data, 'secrets', 'modules.json');
    const old = readModuleSecrets(secretsFile).modules.inventory!.password;
    const list = await run(['modules', 'list', '--data', data]);
    expect(list.code).toBe(0);
    expect(list.out.trim().split('\n').map((l) => l.split('  ')[0])).toEqual(['commerce', 'inventory', 'operations', 'procurement']);

    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      const r = await run(['modules', 'password', '--module', 'inventory', '--data', data]);
      expect(r.code, r.err).toBe(0);
      const fresh = /^new broker password for module inventory \(user 'inventory'\): (\S+)$/m.exec(r.out)?.[1];
      expect(fresh).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(fresh).not.toBe(old);
      expect(r.out).toContain(`also written to ${secretsFile}`);
      // The file a demo site's modules read holds the new one, still readable by its owner alone.
      expect(readModuleSecrets(secretsFile).modules.inventory!.password).toBe(fresh);
      expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
      const attempt = (password: string) =>
        new Promise<string>((resolve) => {
          const c = mqtt.connect(site.mqttUrl, { username: 'inventory', password, protocolVersion: 4, reconnectPeriod: 0 });
          c.once('connect', () => void c.endAsync(true).then(() => resolve('connected')));
          c.once('error', (e) => void c.endAsync(true).then(() => resolve(e.message)));
        });
      expect(await attempt(fresh!)).toBe('connected');
      expect(await attempt(old)).toMatch(/Bad username or password/);
    } finally {
      await site.stop();
    }
    // Without the file: printed only. Bad input names the option; an external broker's passwords are its own.
    rmSync(secretsFile);
    const again = await run(['modules', 'password', '--module', 'commerce', '--data', data]);
    expect(again.code).toBe(0);
    expect(again.out).not.toContain('also written');
    // Any module name is taken (a new module: modules-password-new-module.test.ts); one that is no topic level is not.
    const bad = await run(['modules', 'password', '--module', 'bill/ing', '--data', data]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(`option '--module': expected a module name ([A-Za-z0-9][A-Za-z0-9_-]{0,63}, the <module> level of its topics), got "bill/ing"`);
    edit((c) => {
      c.broker = { mode: 'external', url: 'mqtt://127.0.0.1:1884', username: 'tilstand', passwordFile: join(data, 'secrets', 'broker.pw') };
    });
    const ext = await run(['modules', 'password', '--module', 'inventory', '--data', data]);
    expect(ext.code).toBe(2);
    expect(ext.err).toMatch(/external broker .*mosquitto_passwd/);
  });

  it('deadletters replay on a running site waits for the result past 10 s while the site works on it, with progress; an error when the site goes away', { timeout: 60_000 }, async () => {
    const data = join(dir, 'd');
    await newSite(data);
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    let stopped = false;
    try {
      // A letter of a contract version the site lacks, then the version added over the socket.
      const event = { op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: 5, note: 'x' }, source: { module: 'inventory', stream: 'stock', seq: 1 }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 2 } };
      await site.ingestor.accept('tilstand/north/events/inventory/stock', Buffer.from(JSON.stringify(event)));
      site.ingestor.commitAll();
      expect(site.ingestor.listDeadLetters({ status: 'open' }).map((d) => d.reason)).toEqual(['no_contract']);
      const file = join(dir, 'inventory.stock.v2.json');
      writeFileSync(file, JSON.stringify({ ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING', default: null }] }));
      expect((await run(['contracts', 'add', '--data', data, '--file', file])).code).toBe(0);

      // The replay of a flood outlasts the old fixed 10 s wait: here 11 s before the real replay runs.
      const replay = site.ingestor.replayDeadLetters.bind(site.ingestor);
      const slow = vi.spyOn(site.ingestor, 'replayDeadLetters').mockImplementation(async (...a) => {
        await new Promise((r) => setTimeout(r, 11_000));
        return replay(...a);
      });
      const r = await run(['deadletters', 'replay', '--data', data]);
      expect([r.code, r.out]).toEqual([0, 'replayed 1, still failing 0\n']);
      // Said once, at the 10 s mark (11 s on a loaded machine, whose timers run late).
      expect(r.err).toMatch(/^tilstand: the site is still replaying dead letters \(1[01] s\)…\n$/);
      expect(site.ingestor.listDeadLetters({ status: 'open' })).toEqual([]);

      // The site stops while it replays: an error (exit 5) that says the outcome is unknown.
      let finish: () => void = () => undefined;
      slow.mockImplementation(() => new Promise((r) => (finish = () => r({ replayed: 0, failed: 0, notOpen: [], alike: 0 }))));
      const pending = run(['deadletters', 'replay', '--data', data]);
      await new Promise((r) => setTimeout(r, 1_500));
      await site.stop();
      stopped = true;
      const gone = await pending;
      finish();
      expect(gone.code).toBe(5);
      expect(gone.out).toBe('');
      expect(gone.err).toMatch(/^tilstand: .*control\.sock closed the connection without an answer to 'deadletters\.replay' \(the site stopped\?\); the replay's outcome is unknown: letters it committed stay replayed, see 'tilstand deadletters list'\n$/);
    } finally {
      if (!stopped) await site.stop();
    }
  });

  it('deadletters dismiss --alike on a running site waits for the result past 10 s while the site works on it, with progress; an error when the site goes away', { timeout: 60_000 }, async () => {
    const data = join(dir, 'd');
    await newSite(data);
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    let stopped = false;
    try {
      await site.users.add({ name: 'Lena', role: 'shift_lead', pin: '4827' });
      for (const garbage of ['not json', 'nor this']) await site.ingestor.accept('tilstand/north/events/inventory/stock', Buffer.from(garbage));
      site.ingestor.commitAll();
      const [first] = site.ingestor.listDeadLetters({ status: 'open' }).map((d) => d.position.toString());
      const dismiss = () => run(['deadletters', 'dismiss', '--data', data, '--id', first!, '--alike', '--user', 'Lena', '--pin', '4827', '--note', 'a module sent garbage']);

      // Dismissing a flood's letters outlasts the old fixed 10 s wait: here 11 s before the slices come.
      const slices = site.ingestor.deadLetterSlices.bind(site.ingestor);
      const slow = vi.spyOn(site.ingestor, 'deadLetterSlices').mockImplementation(async function* (...a) {
        await new Promise((r) => setTimeout(r, 11_000));
        yield* slices(...a);
      });
      const r = await dismiss();
      expect([r.code, r.out]).toEqual([0, 'dismissed 2 as Lena (1 of them alike: open, from the same topic with the same reason)\n']);
      expect(r.err).toBe('tilstand: the site is still dismissing dead letters (10 s)…\n');
      expect(site.ingestor.listDeadLetters({ status: 'open' })).toEqual([]);

      // The site stops while it dismisses: an error (exit 5) that says the outcome is unknown.
      let finish: () => void = () => undefined;
      slow.mockImplementation(async function* () {
        await new Promise<void>((r) => (finish = r));
      });
      const pending = dismiss();
      await new Promise((r) => setTimeout(r, 1_500));
      await site.stop();
      stopped = true;
      const gone = await pending;
      finish();
      expect([gone.code, gone.out]).toEqual([5, '']);
      expect(gone.err).toMatch(/^tilstand: .*control\.sock closed the connection without an answer to 'deadletters\.dismiss' \(the site stopped\?\); the dismissal's outcome is unknown: letters it committed stay dismissed, see 'tilstand deadletters list'\n$/);
    } finally {
      if (!stopped) await site.stop();
    }
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
