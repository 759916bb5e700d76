// A table of the site's own (config.json `tables` entry with `columns`; core/ingest site-tables.ts):
// a new module's stream gets a table of its own instead of squeezing into a seed table. End to end
// on a real data directory and the embedded broker: config check, start creates the table, events
// land in it, status lists it with its budget, a column added later evolves the table (earlier rows
// read it as null), and a definition that no longer fits the table on disk is refused, naming the
// config entry, by config check and by start alike.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { publishYardDoors, YARD_BINDING, YARD_CONTRACT, YARD_DOORS } from '../ingest/test-support/yard-doors.ts';
import { Catalog, valueToJson } from '../lsm/index.ts';
import { ConfigError, parseConfig, readConfig, siteTables, writeConfig, type SiteConfig } from './config.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { runMain as run } from './cli/test-support.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-tables-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const CONTRACT = YARD_CONTRACT;
const DOORS = YARD_DOORS;
const BINDING = YARD_BINDING;

const withDoors = (c: SiteConfig, doors: Record<string, unknown> = DOORS, binding: object = BINDING): SiteConfig =>
  ({ ...c, tables: [...c.tables, doors], bindings: [...SEED_BINDINGS, binding] }) as unknown as SiteConfig;

/** The rows of a table of the site, latest snapshot, in key order, as JSON values. */
function rowsOf(data: string, table: string): Record<string, unknown>[] {
  const t = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table });
  const r = t.reader();
  try {
    return [...r.scan()].map((row) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, row[i])])));
  } finally {
    r.close();
  }
}

describe("a table of the site's own", () => {
  it('is made at start from config.json, fed by its binding, listed with its budget, and gains a column later', { timeout: 90_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    const pw = /\): (\S+)$/m.exec((await run(['modules', 'password', '--module', 'yard', '--data', data])).out)![1]!;
    writeFileSync(join(dir, 'yard.doors.v1.json'), JSON.stringify(CONTRACT));
    expect((await run(['contracts', 'add', '--file', join(dir, 'yard.doors.v1.json'), '--data', data])).code).toBe(0);
    writeConfig(data, withDoors(readConfig(data)));
    const check = await run(['config', 'check', '--data', data]);
    expect(check.code, check.err).toBe(0);
    expect(check.out).toContain("table yard_doors (the site's own): made at the next start\n");
    // In the order a running site lists them (the Ingestor's), which a stopped site's status keeps.
    expect(siteTables(readConfig(data))).toEqual(['work_queue', 'resources', 'stock', 'yard_doors', 'dead_letters']);

    let site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      await publishYardDoors(site.mqttUrl, pw, [
        { seq: 1, door: 'D-01', state: 'free' },
        { seq: 2, door: 'D-02', state: 'occupied' },
        { seq: 3, door: 'D-01', state: 'occupied' },
      ]);
      await untilRows(site, data, (rows) => rows.some((r) => r.yard_seq === 3));
      expect(site.ingestor.listDeadLetters({ status: 'open' })).toEqual([]);
      const st = site.ingestor.status().find((t) => t.table === 'yard_doors');
      expect(st).toMatchObject({ table: 'yard_doors', budgetMs: 30_000, decision: DOORS.decision });
    } finally {
      await site.stop();
    }
    expect(rowsOf(data, 'yard_doors')).toEqual([
      { door_id: 'D-01', state: 'occupied', yard_seq: 3 },
      { door_id: 'D-02', state: 'occupied', yard_seq: 2 },
    ]);
    const table = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'yard_doors' });
    expect(table.schema.comment).toBe(DOORS.comment);
    expect(table.schema.options.raw['merge-engine']).toBe('deduplicate');
    // `tilstand status` on the stopped site lists it, fed, with its budget.
    const status = JSON.parse((await run(['status', '--data', data, '--json'])).out) as { tables: { table: string; rows: number | null; budgetMs: number; fed: boolean }[] };
    expect(status.tables.find((t) => t.table === 'yard_doors')).toMatchObject({ rows: 2, budgetMs: 30_000, fed: true });

    // A column added at the end of the definition (and bound): the table gains it at the next start.
    const wider = { ...DOORS, columns: [...DOORS.columns, { name: 'trailer_id', type: 'STRING NOT NULL' }] };
    const before = readConfig(data);
    writeConfig(data, { ...before, tables: before.tables.map((t) => (t.table === 'yard_doors' ? wider : t)), bindings: [...SEED_BINDINGS, { ...BINDING, columns: { ...BINDING.columns, trailer_id: 'after.trailer_id' } }] } as unknown as SiteConfig);
    const adds = await run(['config', 'check', '--data', data]);
    expect(adds.code, adds.err).toBe(0);
    expect(adds.out).toContain("table yard_doors (the site's own): the next start adds column trailer_id\n");
    site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      await publishYardDoors(site.mqttUrl, pw, [{ seq: 4, door: 'D-03', state: 'occupied', trailer: 'TR-9' }]);
      await untilRows(site, data, (rows) => rows.some((r) => r.yard_seq === 4));
    } finally {
      await site.stop();
    }
    // Earlier rows read the new column as null; the column is nullable (its earlier rows have none).
    expect(rowsOf(data, 'yard_doors')).toEqual([
      { door_id: 'D-01', state: 'occupied', yard_seq: 3, trailer_id: null },
      { door_id: 'D-02', state: 'occupied', yard_seq: 2, trailer_id: null },
      { door_id: 'D-03', state: 'occupied', yard_seq: 4, trailer_id: 'TR-9' },
    ]);
    const evolved = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'yard_doors' });
    expect(evolved.schema.id).toBe(1);
    expect(evolved.schema.fields.at(-1)!.type.nullable).toBe(true);
    // The same definition again changes nothing (no schema-2).
    site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    await site.stop();
    expect((await run(['config', 'check', '--data', data])).out).toContain("table yard_doors (the site's own): on disk as defined\n");
    // Without its binding it is kept but fed by nothing: config check says so.
    const unbound = readConfig(data);
    writeConfig(data, { ...unbound, bindings: 'seed' });
    expect((await run(['config', 'check', '--data', data])).out).toContain("table yard_doors (the site's own): on disk as defined; no binding writes it\n");
    writeConfig(data, unbound);
    expect(new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'yard_doors' }).schema.id).toBe(1);

    // Descriptions, the comment and the options Paimon lets change follow the definition (ALTER
    // TABLE … SET/UNSET, COMMENT); an option fixed at creation does not.
    const c0 = readConfig(data);
    const retuned = (f: (t: Record<string, unknown>) => Record<string, unknown>) =>
      writeConfig(data, { ...readConfig(data), tables: readConfig(data).tables.map((t) => (t.table === 'yard_doors' ? f(t as unknown as Record<string, unknown>) : t)) } as unknown as SiteConfig);
    retuned((t) => ({
      ...t,
      comment: 'Dock doors at the north gate.',
      columns: (t.columns as { name: string }[]).map((c) => (c.name === 'state' ? { ...c, description: 'free | occupied | down | reserved' } : c)),
      options: { ...(t.options as object), 'snapshot.num-retained.max': '50' },
    }));
    expect((await run(['config', 'check', '--data', data])).out).toContain(
      "table yard_doors (the site's own): the next start changes option snapshot.num-retained.max and updates its descriptions\n",
    );
    site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    await site.stop();
    let retunedTable = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'yard_doors' });
    expect(retunedTable.schema.id).toBe(2);
    expect(retunedTable.schema.comment).toBe('Dock doors at the north gate.');
    expect(retunedTable.schema.fields.find((f) => f.name === 'state')!.description).toBe('free | occupied | down | reserved');
    expect(retunedTable.schema.options.raw['snapshot.num-retained.max']).toBe('50');
    // Given no more, the option is removed again.
    retuned((t) => ({ ...t, options: DOORS.options }));
    expect((await run(['config', 'check', '--data', data])).out).toContain("table yard_doors (the site's own): the next start changes option snapshot.num-retained.max\n");
    site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    await site.stop();
    retunedTable = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'yard_doors' });
    expect(retunedTable.schema.id).toBe(3);
    expect(retunedTable.schema.options.raw['snapshot.num-retained.max']).toBeUndefined();
    // Another merge engine is another table: refused, naming the option and both values.
    retuned((t) => ({ ...t, options: { ...DOORS.options, 'merge-engine': 'partial-update' } }));
    const engine = await run(['config', 'check', '--data', data]);
    expect(engine.code).not.toBe(0);
    expect(engine.err).toContain(`option 'merge-engine' is "deduplicate" in the table and "partial-update" in the definition: option 'merge-engine' cannot be changed after the table is created`);
    writeConfig(data, c0);
    retuned((t) => ({ ...t, comment: 'Dock doors at the north gate.', columns: (t.columns as { name: string }[]).map((c) => (c.name === 'state' ? { ...c, description: 'free | occupied | down | reserved' } : c)) }));
    expect((await run(['config', 'check', '--data', data])).out).toContain("table yard_doors (the site's own): on disk as defined\n");

    // A definition that changes a column's type no longer fits the table: refused by config check
    // and by start, naming the entry and the difference; the table is left as it was.
    const config = readConfig(data);
    const i = config.tables.findIndex((t) => t.table === 'yard_doors');
    writeConfig(data, { ...config, tables: config.tables.map((t) => (t.table === 'yard_doors' ? { ...t, columns: t.columns!.map((c) => (c.name === 'state' ? { ...c, type: 'INT' } : c)) } : t)) });
    const refused = await run(['config', 'check', '--data', data]);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain(`config tables[${i}]: table 'yard_doors' exists with columns (door_id STRING NOT NULL, state STRING, yard_seq BIGINT, trailer_id STRING)`);
    expect(refused.err).toContain("column 'state' is STRING in the table and INT in the definition: a column's type cannot change");
    let startError: unknown;
    try {
      await (await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false })).stop();
    } catch (e) {
      startError = e;
    }
    expect(startError).toBeInstanceOf(ConfigError);
    expect((startError as ConfigError).key).toBe(`tables[${i}]`);
    expect(new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'yard_doors' }).schema.id).toBe(3);
  });

  it("takes the events its module sent before the table existed at the start that makes it, and closes their dead letters", { timeout: 90_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    const pw = /\): (\S+)$/m.exec((await run(['modules', 'password', '--module', 'yard', '--data', data])).out)![1]!;
    writeFileSync(join(dir, 'yard.doors.v1.json'), JSON.stringify(CONTRACT));
    expect((await run(['contracts', 'add', '--file', join(dir, 'yard.doors.v1.json'), '--data', data])).code).toBe(0);
    // The yard system goes live before the site has a table for it: its events wait as no_binding.
    let site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      await publishYardDoors(site.mqttUrl, pw, [
        { seq: 1, door: 'D-01', state: 'free' },
        { seq: 2, door: 'D-02', state: 'down' },
      ]);
      site.ingestor.commitAll();
      expect(site.ingestor.listDeadLetters({ status: 'open' }).map((d) => d.reason)).toEqual(['no_binding', 'no_binding']);
      // The table and its binding written into config.json while the site runs: a replay now
      // still fails (the site has not loaded them), and says why and what to do.
      writeConfig(data, withDoors(readConfig(data)));
      const early = await run(['deadletters', 'replay', '--data', data]);
      expect([early.code, early.out]).toEqual([3, 'replayed 0, still failing 2\n']);
      expect(early.err).toBe(
        "tilstand: config.json's bindings and tables changed since the site started and take effect at its next start; restart it, then replay again: the letters that still fail may be the ones they are for\n",
      );
    } finally {
      await site.stop();
    }
    // The start that makes the table reads the journal into it, and the two letters, whose events
    // are now in the table, are closed as replayed: nothing is left for a replay to do.
    const log: string[] = [];
    site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => log.push(l) });
    try {
      expect(log).toContain("ingest: 2 dead letters closed as replayed: the journal's read at start applied their events to the tables now bound to them");
      await untilRows(site, data, (rows) => rows.length === 2);
      expect(site.ingestor.listDeadLetters().map((d) => [d.reason, d.status])).toEqual([
        ['no_binding', 'replayed'],
        ['no_binding', 'replayed'],
      ]);
      const replayed = await run(['deadletters', 'replay', '--data', data]);
      expect([replayed.code, replayed.out, replayed.err]).toEqual([0, 'replayed 0, still failing 0\n', '']);
      // The module goes on after them, in order.
      await publishYardDoors(site.mqttUrl, pw, [{ seq: 3, door: 'D-02', state: 'free' }]);
      await untilRows(site, data, (rows) => rows.some((r) => r.yard_seq === 3));
    } finally {
      await site.stop();
    }
    const rows = rowsOf(data, 'yard_doors');
    expect(rows).toEqual([
      { door_id: 'D-01', state: 'free', yard_seq: 1 },
      { door_id: 'D-02', state: 'free', yard_seq: 3 },
    ]);
  });

  it('is checked whole by config check: name, columns, key, options, and a binding to a table that is none', () => {
    const base = JSON.parse(JSON.stringify({ format: 1, site: 'north' }));
    const refusal = (entry: Record<string, unknown>, bindings?: unknown[]): string => {
      try {
        parseConfig({ ...base, tables: [entry], ...(bindings ? { bindings } : {}) });
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(refusal(DOORS)).toBe('accepted');
    expect(refusal({ ...DOORS, table: 'stock' })).toBe("config tables[0].columns: 'stock' is one of Tilstand's own tables; its columns are not config's to give (a table of the site's own needs another name)");
    expect(refusal({ ...DOORS, table: 'YardDoors' })).toMatch(/^config tables\[0\]\.table: expected a table name of lower-case letters, digits and '_' .*got "YardDoors"$/);
    expect(refusal({ ...DOORS, columns: [...DOORS.columns, { name: 'since', type: 'TIMESTAMPZ' }] })).toMatch(/^config tables\[0\]\.columns\[3\]\.type: not a Paimon type: /);
    expect(refusal({ ...DOORS, columns: [...DOORS.columns, { name: 'state', type: 'INT' }] })).toBe("config tables[0].columns[3].name: column 'state' is given twice");
    expect(refusal({ ...DOORS, primaryKeys: ['door'] })).toBe("config tables[0].primaryKeys[0]: 'door' is not one of the columns (door_id, state, yard_seq)");
    expect(refusal({ ...DOORS, primaryKeys: [] })).toMatch(/^config tables\[0\]\.primaryKeys: expected a non-empty array of column names/);
    expect(refusal({ ...DOORS, options: { 'merge-engine': 'newest' } })).toMatch(/^config tables\[0\]\.options: .*merge-engine/);
    expect(refusal({ ...DOORS, options: { bucket: 1 } })).toBe('config tables[0].options.bucket: expected a string (Paimon options are strings: "1", "true"), got number 1');
    // A partition key must be in the primary key (core/site/partitioned-site-table.test.ts has the rest).
    expect(refusal({ ...DOORS, partitionKeys: ['state'] })).toMatch(/^config tables\[0\]\.partitionKeys\[0\]: 'state' is not in primaryKeys \(door_id\)/);
    expect(refusal({ ...DOORS, options: { 'sequence.field': 'seq' } })).toBe("config tables[0].options: option 'sequence.field' names unknown column 'seq'");
    // Files outside the table's folder would be missed by sync, restore and backups; write-only
    // would leave the table without compaction.
    expect(refusal({ ...DOORS, options: { path: '/srv/doors' } })).toMatch(/^config tables\[0\]\.options\.path: a site's table lives in warehouse\/site_<id>\.db\/<table>\//);
    expect(refusal({ ...DOORS, options: { 'data-file.external-paths': 'file:///mnt/a' } })).toMatch(/^config tables\[0\]\.options\.data-file\.external-paths: /);
    expect(refusal({ ...DOORS, options: { 'write-only': 'true' } })).toMatch(/^config tables\[0\]\.options\.write-only: the site's writer is the only compaction/);
    const { columns: _c, ...noColumns } = DOORS;
    expect(refusal(noColumns)).toBe("config tables[0].comment: only a table of the site's own, with 'columns', takes 'comment'");
    expect(refusal({ table: 'yard_doors', budgetMs: 1000, decision: 'd', confirmedBy: 'c' })).toMatch(/^config tables\[0\]\.table: expected one of approval_inbox, work_queue, resources, stock, dead_letters, or a table of the site's own with 'columns' and 'primaryKeys'/);
    // A binding may write the site's table once it is defined, and names it among the tables when not.
    expect(refusal(DOORS, [BINDING])).toBe('accepted');
    expect(refusal({ ...DOORS, table: 'yard_gates' }, [BINDING])).toMatch(/^config bindings\[0\]\.table: expected one of work_queue, resources, stock, dead_letters, yard_gates, got "yard_doors"$/);
    // A binding of a column the table does not have is refused as for a seed table.
    expect(refusal(DOORS, [{ ...BINDING, columns: { ...BINDING.columns, dock: 'after.trailer_id' } }])).toMatch(/^config bindings\[0\]: .*dock/);
    // Its sequence field from one stream's seq: a filter of several streams, or a second stream
    // writing it, is refused (the second named, with the first).
    expect(refusal(DOORS, [{ ...BINDING, topic: 'tilstand/+/events/yard/+' }])).toMatch(/^config bindings\[0\]: binding 'yard\.doors→yard_doors': topic filter 'tilstand\/\+\/events\/yard\/\+' does not name one module and stream/);
    expect(refusal(DOORS, [BINDING, { ...BINDING, name: 'yard.gates→yard_doors', topic: 'tilstand/+/events/yard/gates' }])).toMatch(
      /^config bindings\[1\]: binding 'yard\.gates→yard_doors': writes column yard_seq of table yard_doors from the seq of stream yard\/gates, and binding 'yard\.doors→yard_doors' from that of yard\/doors: /,
    );
  });

  describe("is written by its binding from the module's seq: config check refuses a sequence field written from anything but source.seq", () => {
    const seqRefusal = (entry: Record<string, unknown>, bindings: unknown[]): string => {
      try {
        parseConfig({ format: 1, site: 'north', tables: [entry], bindings });
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      return 'accepted';
    };
    const why = "rows are ordered by the module's seq, so an event that comes twice cannot overwrite a newer row";

    it('takes the yard fixture as it is (yard_seq from source.seq)', () => {
      expect(seqRefusal(DOORS, [...SEED_BINDINGS, BINDING])).toBe('accepted');
      // A first-row table keeps the first row and has no sequence field (the table store refuses
      // one there): its binding writes what it likes.
      const { yard_seq: _, ...noSeq } = BINDING.columns;
      expect(seqRefusal({ ...DOORS, options: { 'merge-engine': 'first-row' } }, [{ ...BINDING, columns: noSeq }])).toBe('accepted');
    });

    it('refuses it from another path or from the envelope\'s time', () => {
      expect(seqRefusal(DOORS, [...SEED_BINDINGS, { ...BINDING, columns: { ...BINDING.columns, yard_seq: 'after.door_no' } }])).toBe(
        `config bindings[5]: binding 'yard.doors→yard_doors': column yard_seq is table yard_doors's sequence field and must be written from source.seq (it is written from after.door_no): ${why}`,
      );
      expect(seqRefusal(DOORS, [{ ...BINDING, columns: { ...BINDING.columns, yard_seq: 'ts_ms' } }])).toBe(
        `config bindings[0]: binding 'yard.doors→yard_doors': column yard_seq is table yard_doors's sequence field and must be written from source.seq (it is written from ts_ms): ${why}`,
      );
    });

    it('refuses it not written', () => {
      const { yard_seq: _, ...noSeq } = BINDING.columns;
      expect(seqRefusal(DOORS, [{ ...BINDING, columns: noSeq }])).toBe(
        `config bindings[0]: binding 'yard.doors→yard_doors': column yard_seq is table yard_doors's sequence field and must be written from source.seq (it is not written): ${why}`,
      );
    });

    it('asks it of the first of several sequence fields (Paimon compares them in order)', () => {
      const since = { ...DOORS, columns: [...DOORS.columns, { name: 'since', type: 'BIGINT' }] };
      const withSince = { ...BINDING, columns: { ...BINDING.columns, since: 'ts_ms' } };
      expect(seqRefusal({ ...since, options: { 'sequence.field': 'yard_seq,since' } }, [withSince])).toBe('accepted');
      expect(seqRefusal({ ...since, options: { 'sequence.field': 'since,yard_seq' } }, [withSince])).toBe(
        `config bindings[0]: binding 'yard.doors→yard_doors': column since is the first of table yard_doors's sequence fields (since, yard_seq) and must be written from source.seq (it is written from ts_ms): ${why}`,
      );
    });

    it("asks it of a partial-update table's sequence group the binding writes", () => {
      const grouped = { ...DOORS, options: { 'merge-engine': 'partial-update', 'fields.yard_seq.sequence-group': 'state' } };
      const groupBinding = { ...BINDING, sequenceGroup: { field: 'yard_seq', columns: ['state'] } };
      expect(seqRefusal(grouped, [groupBinding])).toBe('accepted');
      expect(seqRefusal(grouped, [{ ...groupBinding, columns: { ...BINDING.columns, yard_seq: 'after.state' } }])).toBe(
        `config bindings[0]: binding 'yard.doors→yard_doors': column yard_seq is the sequence field of table yard_doors's sequence group (state) and must be written from source.seq (it is written from after.state): ${why}`,
      );
      // A group ordered by two fields: the first is the one compared first, so the seq goes there.
      const since = { ...DOORS, columns: [...DOORS.columns, { name: 'since', type: 'BIGINT' }] };
      expect(seqRefusal({ ...since, options: { 'merge-engine': 'partial-update', 'fields.yard_seq,since.sequence-group': 'state' } }, [groupBinding])).toBe('accepted');
      expect(seqRefusal({ ...since, options: { 'merge-engine': 'partial-update', 'fields.since,yard_seq.sequence-group': 'state' } }, [groupBinding])).toBe(
        `config bindings[0]: binding 'yard.doors→yard_doors': column since is the first sequence field of table yard_doors's sequence group (state) and must be written from source.seq (it is not written): ${why}`,
      );
    });

    it('leaves the seed tables\' rules as they were', () => {
      // Their own bindings write the seq; another path there is not this check's (core/ingest
      // checkBinding's rule 8 asks only that a seed table's sequence field is bound).
      const jobs = SEED_BINDINGS.findIndex((b) => b.table === 'work_queue');
      const seedFromTime = SEED_BINDINGS.map((b, i) => (i === jobs ? { ...b, columns: { ...b.columns, ops_seq: 'ts_ms' } } : b));
      expect(seqRefusal(DOORS, [...seedFromTime, BINDING])).toBe('accepted');
    });
  });

  it("config check and start print the binding that writes a site table's sequence field from elsewhere", { timeout: 30_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    writeConfig(data, withDoors(readConfig(data), DOORS, { ...BINDING, columns: { ...BINDING.columns, yard_seq: 'ts_ms' } }));
    const why =
      "config bindings[5]: binding 'yard.doors→yard_doors': column yard_seq is table yard_doors's sequence field and must be written from source.seq (it is written from ts_ms): " +
      "rows are ordered by the module's seq, so an event that comes twice cannot overwrite a newer row";
    const check = await run(['config', 'check', '--data', data]);
    expect([check.code, check.err]).toEqual([2, `tilstand: ${why}\n`]);
    const start = await run(['start', '--data', data, '--mqtt-port', '0', '--http-port', '0']);
    expect([start.code, start.err.split('\n').filter((l) => l.includes('bindings['))]).toEqual([2, [`tilstand: ${why}`]]);
  });

  it('is written back by writeConfig as config.json gave it', () => {
    const c = parseConfig({ format: 1, site: 'north', tables: [DOORS] });
    expect(JSON.parse(JSON.stringify(c)).tables).toEqual([DOORS]);
    expect(parseConfig(JSON.parse(JSON.stringify(c)))).toEqual(c);
  });
});

/**
 * Waits (at most 20 s) until yard_doors' committed rows satisfy `ok`, committing the running site's
 * ingest between looks: a PUBACK says the event is journaled, not yet applied.
 */
async function untilRows(site: Site, data: string, ok: (rows: Record<string, unknown>[]) => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  let rows: Record<string, unknown>[] = [];
  while (Date.now() < deadline) {
    site.ingestor.commitAll();
    rows = site.ingestor.status().find((t) => t.table === 'yard_doors')?.snapshotId == null ? [] : rowsOf(data, 'yard_doors');
    if (ok(rows)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`yard_doors never had the rows awaited; last: ${JSON.stringify(rows)}`);
}
