// Config validation: defaults fill in, and every bad key is named with what was expected.

import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonErrorWhere } from '../lsm/errors.ts';
import { ConfigError, currentReorderPolicyKey, DEFAULT_TABLE_CACHE_BYTES, DEFAULT_WRITE_BUFFER_BYTES, decisionOptions, defaultConfig, inboxBudget, ingestBudgets, parseConfig, parseReorderPolicyKey, readConfig, reorderPolicyKey, streamSilentMs } from './config.ts';

function errorOf(raw: unknown): ConfigError {
  try {
    parseConfig(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('parseConfig', () => {
  it('accepts the default config and fills defaults for a minimal one', () => {
    const d = defaultConfig('north');
    expect(parseConfig(JSON.parse(JSON.stringify(d)))).toEqual(d);
    const min = parseConfig({ site: 'north' });
    expect(min.broker).toMatchObject({ mode: 'embedded', host: '127.0.0.1', port: 1883, tls: null, allowInsecureNonLoopback: false });
    expect(min.http).toEqual({ host: '127.0.0.1', port: 8470, tls: null });
    expect(min.tables.map((t) => t.table)).toEqual(['approval_inbox', 'work_queue', 'stock', 'resources', 'dead_letters']);
    // approval_inbox's budget is the site's (the agent's checks); ingest gets the others.
    expect(inboxBudget(min)).toMatchObject({ table: 'approval_inbox', budgetMs: 2_000 });
    expect(ingestBudgets(min).map((t) => t.table)).toEqual(['work_queue', 'stock', 'resources', 'dead_letters']);
    const own = parseConfig({ site: 'north', tables: [{ table: 'stock', budgetMs: 300_000, decision: 'd', confirmedBy: 'c' }, { table: 'approval_inbox', budgetMs: 5_000, decision: 'leads decide within seconds', confirmedBy: 'Kari, shift lead' }] });
    expect(inboxBudget(own)).toEqual({ table: 'approval_inbox', budgetMs: 5_000, decision: 'leads decide within seconds', confirmedBy: 'Kari, shift lead' });
    expect(ingestBudgets(own).map((t) => t.table)).toEqual(['stock']);
    // A config from before approval_inbox was taken here: core/ingest's default.
    expect(inboxBudget(parseConfig({ site: 'north', tables: [{ table: 'stock', budgetMs: 300_000, decision: 'd', confirmedBy: 'c' }] })).budgetMs).toBe(2_000);
    expect(min.bindings).toBe('seed');
    expect(min.hq.target).toBeNull();
    for (const target of ['/mnt/hq', 'file:///mnt/hq', 's3://bucket/sites?endpoint=http://10.0.0.9:9000']) expect(parseConfig({ site: 'north', hq: { target } }).hq.target).toBe(target);
    expect(min.memory).toEqual({ tableCacheBytes: DEFAULT_TABLE_CACHE_BYTES, writeBufferBytes: DEFAULT_WRITE_BUFFER_BYTES });
    expect(parseConfig({ site: 'north', memory: { tableCacheBytes: 0 } }).memory).toEqual({ tableCacheBytes: 0, writeBufferBytes: DEFAULT_WRITE_BUFFER_BYTES });
    // Stream silence alarms: none on a new site; a named stream before '*'; 0 = never.
    expect(min.alarms).toEqual({ streamSilentMs: {} });
    const al = parseConfig({ site: 'north', alarms: { streamSilentMs: { '*': 1_800_000, 'procurement/inbound': 0, 'operations/jobs': 600_000 } } });
    expect([streamSilentMs(al, 'procurement', 'inbound'), streamSilentMs(al, 'operations', 'jobs'), streamSilentMs(al, 'inventory', 'stock'), streamSilentMs(min, 'inventory', 'stock')]).toEqual([0, 600_000, 1_800_000, 0]);
    // Evidence on the site: a week for runs that proposed, a day for the others, a year for decisions.
    expect(min.evidence).toEqual({ proposingRunsMs: 7 * 86_400_000, otherRunsMs: 86_400_000, decisionsMs: 365 * 86_400_000 });
    expect(parseConfig({ site: 'north', evidence: { decisionsMs: 5 * 365 * 86_400_000 } }).evidence.decisionsMs).toBe(5 * 365 * 86_400_000);
    // The floor UI signs out after 10 min without use, a site's config without `ui` included; 0 = never.
    expect(min.deadLetters).toEqual({ closedRetentionMs: 30 * 86_400_000 });
    expect(parseConfig({ site: 'north', deadLetters: { closedRetentionMs: 0 } }).deadLetters.closedRetentionMs).toBe(0);
    expect(parseConfig({ site: 'north', deadLetters: { closedRetentionMs: 3_600_000 } }).deadLetters.closedRetentionMs).toBe(3_600_000);
    expect(min.ui).toEqual({ idleSignOutMs: 600_000 });
    expect(parseConfig({ site: 'north', ui: { idleSignOutMs: 0 } }).ui.idleSignOutMs).toBe(0);
    expect(parseConfig({ site: 'north', ui: { idleSignOutMs: 180_000 } }).ui.idleSignOutMs).toBe(180_000);
    // The agent: core/agents' defaults; a site sets its own items' reorder policies and run times.
    expect(min.agent).toEqual({ intervalMs: 60_000, jobDurationMsByCapability: {}, defaultJobDurationMs: 3_600_000, reorderByItem: {}, defaultReorder: { reorderPoint: 5, orderUpTo: 20 }, idleMsMin: 900_000, replenishQtyMediumMin: 100 });
    const ag = parseConfig({ site: 'north', agent: { reorderByItem: { 'ITEM-007': { reorderPoint: 12, orderUpTo: 60 } }, jobDurationMsByCapability: { pack: 1_200_000 }, idleMsMin: 0 } }).agent;
    expect(ag).toMatchObject({ reorderByItem: { 'ITEM-007': { reorderPoint: 12, orderUpTo: 60 } }, jobDurationMsByCapability: { pack: 1_200_000 }, idleMsMin: 0, defaultReorder: { reorderPoint: 5, orderUpTo: 20 } });
    // …and the agent gets them with the evidence section's retentions.
    expect(decisionOptions({ agent: ag, evidence: min.evidence }).agent).toMatchObject({ reorderByItem: { 'ITEM-007': { reorderPoint: 12, orderUpTo: 60 } }, idleMsMin: 0, evidenceRetentionMs: 7 * 86_400_000, baselineRetentionMs: 86_400_000 });
  });

  it('names the key and the expectation for each bad value', () => {
    const cases: [unknown, string, RegExp][] = [
      [{}, 'site', /expected a non-empty string/],
      [{ site: '../x' }, 'site', /slash/],
      [{ site: 'a..b' }, 'site', /'\.\.'/],
      [{ site: 'bad\u0001' }, 'site', /control characters/],
      [{ site: 'has space' }, 'site', /letters, digits/],
      [{ site: 's', colour: 1 }, 'colour', /unknown key/],
      [{ site: 's', broker: { port: 70000 } }, 'broker.port', /integer from 0 to 65535, got 70000/],
      [{ site: 's', broker: { port: '1883' } }, 'broker.port', /got "1883"/],
      [{ site: 's', broker: { mode: 'cloud' } }, 'broker.mode', /"embedded" or "external"/],
      [{ site: 's', broker: { mode: 'external', url: 'http://x', username: 'u', passwordFile: '/p' } }, 'broker.url', /mqtt:\/\/host:port/],
      [{ site: 's', broker: { mode: 'external', url: 'mqtt://x:1883', passwordFile: '/p' } }, 'broker.username', /non-empty string/],
      [{ site: 's', broker: { tls: { certPath: 'c' } } }, 'broker.tls.keyPath', /non-empty string/],
      [{ site: 's', broker: { allowInsecureNonLoopback: 'yes' } }, 'broker.allowInsecureNonLoopback', /true or false/],
      [{ site: 's', http: { port: -1 } }, 'http.port', /0 to 65535/],
      [{ site: 's', tables: {} }, 'tables', /array of \{table, budgetMs/],
      [{ site: 's', tables: [{ table: 'stock', budgetMs: 50, decision: 'd', confirmedBy: 'c' }] }, 'tables[0].budgetMs', /from 100/],
      [{ site: 's', tables: [{ table: 'stock', budgetMs: 1000, confirmedBy: 'c' }] }, 'tables[0].decision', /non-empty string/],
      [{ site: 's', tables: [{ table: 'nope', budgetMs: 1000, decision: 'd', confirmedBy: 'c' }] }, 'tables[0].table', /expected one of approval_inbox, work_queue/],
      // The agent checks the inbox every second: a budget under two checks would be breached by design.
      [{ site: 's', tables: [{ table: 'approval_inbox', budgetMs: 1500, decision: 'd', confirmedBy: 'c' }] }, 'tables[0].budgetMs', /at least 2000 for approval_inbox \(twice the agent's check .* every 1000 ms\), got 1500/],
      [{ site: 's', tables: [{ table: 'stock', budgetMs: 1000, decision: 'd', confirmedBy: 'c' }, { table: 'stock', budgetMs: 1000, decision: 'd', confirmedBy: 'c' }] }, 'tables[1].table', /already/],
      [{ site: 's', journal: { retentionAgeMs: 5 } }, 'journal.retentionAgeMs', /from 60000/],
      [{ site: 's', diskBudget: { journalBytesMax: 2 * 1024 * 1024 } }, 'diskBudget.journalBytesMax', /more than journal.retentionBytesMax/],
      [{ site: 's', hq: { target: 3 } }, 'hq.target', /null or a non-empty string/],
      // A service's working directory is the service manager's choice: a relative one would land anywhere.
      [{ site: 's', hq: { target: 'hq/share' } }, 'hq.target', /'hq\/share' is a relative directory; give an absolute one/],
      [{ site: 's', hq: { target: 's3://' } }, 'hq.target', /names no bucket/],
      [{ site: 's', bindings: 'all' }, 'bindings', /"seed" or an array/],
      // Checked as the Ingestor checks them at start (which refused them naming no key).
      [{ site: 's', bindings: [{ topic: 'tilstand/+/events/x/y', contract: 'x.y', table: 'stok', columns: {} }] }, 'bindings[0].table', /expected one of work_queue, resources, stock, dead_letters, got "stok"/],
      [{ site: 's', bindings: [{ topic: 'tilstand/+/events/x/y', contract: 'x.y', table: 'stock', columns: { item: 'after.item' } }] }, 'bindings[0]', /binding 'x\.y→stock': key column 'location' of table 'stock' is not bound/],
      [{ site: 's', memory: { tableCacheBytes: -1 } }, 'memory.tableCacheBytes', /integer from 0 to \d+, got -1/],
      [{ site: 's', memory: { tableCacheBytes: '128 MiB' } }, 'memory.tableCacheBytes', /got "128 MiB"/],
      [{ site: 's', memory: { writeBufferBytes: 1000 } }, 'memory.writeBufferBytes', /integer from 1048576 to \d+, got 1000/],
      [{ site: 's', memory: { cacheBytes: 1 } }, 'memory.cacheBytes', /unknown key \(expected one of tableCacheBytes, writeBufferBytes\)/],
      [{ site: 's', memory: 64 }, 'memory', /expected an object, got 64/],
      [{ site: 's', alarms: { streamSilentMs: { inventory: 600_000 } } }, 'alarms.streamSilentMs.inventory', /expected a stream as module\/stream .* or '\*'/],
      [{ site: 's', alarms: { streamSilentMs: { 'inventory/stock': 5_000 } } }, 'alarms.streamSilentMs.inventory/stock', /expected 0 \(never\) or at least 60000 ms, got 5000/],
      [{ site: 's', alarms: { streamSilentMs: { '*': '10 min' } } }, 'alarms.streamSilentMs.*', /got "10 min"/],
      [{ site: 's', alarms: { silentMs: 1 } }, 'alarms.silentMs', /unknown key \(expected one of streamSilentMs\)/],
      [{ site: 's', evidence: { otherRunsMs: 60_000 } }, 'evidence.otherRunsMs', /integer from 3600000 to \d+, got 60000/],
      [{ site: 's', evidence: { runsMs: 1 } }, 'evidence.runsMs', /unknown key \(expected one of proposingRunsMs, otherRunsMs, decisionsMs\)/],
      [{ site: 's', deadLetters: { closedRetentionMs: 60_000 } }, 'deadLetters.closedRetentionMs', /expected 0 \(keep closed letters for good\) or at least 3600000 ms \(1 h\), got 60000/],
      [{ site: 's', deadLetters: { closedRetentionMs: -1 } }, 'deadLetters.closedRetentionMs', /integer from 0 to \d+, got -1/],
      [{ site: 's', deadLetters: { closedRetentionMs: '30d' } }, 'deadLetters.closedRetentionMs', /integer from 0 to \d+, got "30d"/],
      [{ site: 's', deadLetters: { keepMs: 1 } }, 'deadLetters.keepMs', /unknown key \(expected one of closedRetentionMs\)/],
      [{ site: 's', ui: { idleSignOutMs: 30_000 } }, 'ui.idleSignOutMs', /expected 0 \(never\) or at least 60000 ms, got 30000/],
      [{ site: 's', ui: { idleSignOutMs: 13 * 3_600_000 } }, 'ui.idleSignOutMs', /integer from 0 to 43200000, got 46800000/],
      [{ site: 's', ui: { idleMs: 1 } }, 'ui.idleMs', /unknown key \(expected one of idleSignOutMs\)/],
      [{ site: 's', agent: { reorderByItem: { 'ITEM-007': { reorderPoint: 30, orderUpTo: 20 } } } }, 'agent.reorderByItem.ITEM-007', /expected orderUpTo > reorderPoint, got 20 ≤ 30/],
      [{ site: 's', agent: { reorderByItem: { 'ITEM-007': { reorderPoint: 3, orderUpto: 20 } } } }, 'agent.reorderByItem.ITEM-007.orderUpto', /unknown key \(expected reorderPoint, orderUpTo, locations\)/],
      [{ site: 's', agent: { defaultReorder: { reorderPoint: -1, orderUpTo: 20 } } }, 'agent.defaultReorder.reorderPoint', /expected an integer ≥ 0, got -1/],
      [{ site: 's', agent: { jobDurationMsByCapability: { pack: '20 min' } } }, 'agent.jobDurationMsByCapability.pack', /expected an integer ≥ 1, got "20 min"/],
      [{ site: 's', agent: { intervalMs: 1_000 } }, 'agent.intervalMs', /integer from 10000 to 3600000, got 1000/],
      [{ site: 's', agent: { reorderPoint: 5 } }, 'agent.reorderPoint', /unknown key \(expected one of intervalMs, jobDurationMsByCapability, defaultJobDurationMs, reorderByItem, defaultReorder, idleMsMin, replenishQtyMediumMin, ruleFiles\)/],
      [{ site: 's', agent: { evidenceRetentionMs: 3_600_000 } }, 'agent.evidenceRetentionMs', /set those instead/],
      [{ site: 's', agent: [] }, 'agent', /expected an object, got an array/],
      [[], '(top level)', /expected an object, got an array/],
    ];
    for (const [raw, key, message] of cases) {
      const e = errorOf(raw);
      expect(e.key, JSON.stringify(raw)).toBe(key);
      expect(e.message).toMatch(message);
      expect(e.message.startsWith(`config ${key}: `)).toBe(true);
    }
  });

  it('names the line and column of a JSON syntax error in config.json (edited by hand)', () => {
    const data = mkdtempSync(join(tmpdir(), 'tilstand-config-'));
    try {
      writeFileSync(join(data, 'config.json'), '{\n  "site": "north",\n  broker: {}\n}\n');
      expect(() => readConfig(data)).toThrow(/config\.json is not valid JSON: .*at position 23 \(line 3, column 3\)$/);
      expect(jsonErrorWhere('{"a": 1,}', new SyntaxError('Unexpected token } in JSON at position 8'))).toBe('Unexpected token } in JSON at position 8 (line 1, column 9)');
      // A message without a position (or one that has its line already, as Node 22 gives it) stays as it is.
      expect(jsonErrorWhere('', new SyntaxError('Unexpected end of JSON input'))).toBe('Unexpected end of JSON input');
      expect(jsonErrorWhere('x', new SyntaxError('Unexpected token at position 0 (line 1 column 1)'))).toBe('Unexpected token at position 0 (line 1 column 1)');
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('reads relative certificate, key and password file paths as relative to the data directory', () => {
    const data = mkdtempSync(join(tmpdir(), 'tilstand-config-'));
    try {
      const c = { site: 'north', http: { host: '10.0.0.5', tls: { certPath: 'tls/ui.crt', keyPath: '/etc/tilstand/ui.key' } }, broker: { tls: { certPath: 'tls/mqtt.crt', keyPath: 'tls/mqtt.key' } } };
      writeFileSync(join(data, 'config.json'), JSON.stringify(c));
      const read = readConfig(data);
      expect(read.http.tls).toEqual({ certPath: join(data, 'tls/ui.crt'), keyPath: '/etc/tilstand/ui.key' });
      expect(read.broker.mode === 'embedded' && read.broker.tls).toEqual({ certPath: join(data, 'tls/mqtt.crt'), keyPath: join(data, 'tls/mqtt.key') });
      writeFileSync(join(data, 'config.json'), JSON.stringify({ site: 'north', broker: { mode: 'external', url: 'mqtt://127.0.0.1:1883', username: 'tilstand', passwordFile: 'secrets/broker.pw' } }));
      const ext = readConfig(data).broker;
      expect(ext.mode === 'external' && ext.passwordFile).toBe(join(data, 'secrets/broker.pw'));
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('takes an external broker and TLS settings', () => {
    const ext = parseConfig({ site: 's', broker: { mode: 'external', url: 'mqtts://broker.site:8883', username: 'tilstand', passwordFile: '/etc/tilstand/mqtt.pw' } });
    expect(ext.broker).toEqual({ mode: 'external', url: 'mqtts://broker.site:8883', username: 'tilstand', passwordFile: '/etc/tilstand/mqtt.pw' });
    const tls = parseConfig({ site: 's', broker: { host: '0.0.0.0', tls: { certPath: '/c.pem', keyPath: '/k.pem' } } });
    expect(tls.broker).toMatchObject({ host: '0.0.0.0', tls: { certPath: '/c.pem', keyPath: '/k.pem' } });
  });
});

describe('reorderPolicyKey', () => {
  it("names an item's policy and one location's, and gives both back", () => {
    expect(reorderPolicyKey('ITEM-002', null)).toBe('agent.reorderByItem.ITEM-002');
    expect(reorderPolicyKey('ITEM-002', 'A-01')).toBe('agent.reorderByItem.ITEM-002.locations.A-01');
    for (const [item, location] of [['ITEM-002', null], ['ITEM-002', 'A-01'], ['BOLT.M8', 'DOCK.2']] as const) {
      expect(parseReorderPolicyKey(reorderPolicyKey(item, location))).toEqual({ item, location });
    }
    expect(parseReorderPolicyKey('ui.idleSignOutMs')).toBeUndefined();
  });

  it('tells an item whose id holds a dot (or the words of a location) from an item at a location', () => {
    // Item `A.locations.B` and item `A` at location `B` had the same key: one's floor setting was
    // taken for the other's.
    expect(reorderPolicyKey('A.locations.B', null)).not.toBe(reorderPolicyKey('A', 'B'));
    expect(reorderPolicyKey('A', 'B.locations.C')).not.toBe(reorderPolicyKey('A.locations.B', 'C'));
    const names = ['A', 'B', 'A.locations.B', 'B.locations.C', 'BOLT.M8', 'x[1]', '["A"]', 'say "hi"', 'back\\slash', 'locations', '.', 'ø-1'];
    const keys = new Set<string>();
    for (const item of names) {
      for (const location of [null, ...names]) {
        const key = reorderPolicyKey(item, location);
        keys.add(key);
        expect(parseReorderPolicyKey(key)).toEqual({ item, location });
      }
    }
    expect(keys.size).toBe(names.length * (names.length + 1));
  });

  it('keeps the key of an id without a dot or bracket as it was, and reads the keys written before ids were quoted', () => {
    expect(reorderPolicyKey('ITEM-002', 'A-01')).toBe('agent.reorderByItem.ITEM-002.locations.A-01');
    // Keys in decision logs from before, of ids with a dot: read as they were then.
    expect(parseReorderPolicyKey('agent.reorderByItem.BOLT.M8')).toEqual({ item: 'BOLT.M8', location: null });
    expect(parseReorderPolicyKey('agent.reorderByItem.BOLT.M8.locations.DOCK.2')).toEqual({ item: 'BOLT.M8', location: 'DOCK.2' });
    expect(parseReorderPolicyKey('agent.reorderByItem.x[1]')).toEqual({ item: 'x[1]', location: null });
    // And given as the key the same policy has now.
    expect(currentReorderPolicyKey('agent.reorderByItem.BOLT.M8.locations.DOCK.2')).toBe(reorderPolicyKey('BOLT.M8', 'DOCK.2'));
    expect(currentReorderPolicyKey('agent.reorderByItem.ITEM-002')).toBe('agent.reorderByItem.ITEM-002');
    expect(currentReorderPolicyKey('ui.idleSignOutMs')).toBe('ui.idleSignOutMs');
  });
});
