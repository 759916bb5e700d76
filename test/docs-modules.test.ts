// docs/modules.md ("Writing a module") is what a module's developer in another language has: its
// commands, topics, example event, contract, binding, command and ack, and the refusals it quotes
// must be what the code does. Each check runs the document's own text through the code that
// decides it (help, the broker's ACL, the envelope parser, the contract registry, the binding
// check, the write-back's command), so a change on either side that parts them fails here.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { siteAcl, type Principal } from '../core/ingest/broker.ts';
import { checkEnvelopeContract, ContractRegistry, type Contract } from '../core/ingest/contracts.ts';
import { DEAD_LETTER_REASONS, parseEnvelope, type Envelope } from '../core/ingest/envelope.ts';
import { checkConfigBindings, parseConfig, siteTableDefinitions } from '../core/site/config.ts';
import { SEED_BINDINGS } from '../core/ingest/seed-bindings.ts';
import { RESERVED_TABLE_NAMES } from '../core/ingest/site-tables.ts';
import type { Binding } from '../core/ingest/binding.ts';
import { runMain } from '../core/site/cli/test-support.ts';
import { WriteBack } from '../core/inbox/write-back.ts';
import type { Proposal } from '../core/inbox/proposal.ts';

const ROOT = join(import.meta.dirname, '..');
const DOC = readFileSync(join(ROOT, 'docs/modules.md'), 'utf8');

/** The fenced ```json blocks of the page, in order. */
const jsonBlocks = [...DOC.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!);
const block = (has: string): string => {
  const found = jsonBlocks.filter((b) => b.includes(has));
  expect(found, `one json block of docs/modules.md with ${has}`).toHaveLength(1);
  return found[0]!;
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-docs-modules-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/modules.md', () => {
  it('shows only tilstand commands and flags that tilstand help lists', async () => {
    const help = (await runMain(['help'])).out;
    const commands = [...help.matchAll(/^ {2}tilstand ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)(.*)$/gm)].map((m) => ({ words: m[1]!, line: m[0] }));
    expect(commands.length).toBeGreaterThan(30);
    // Inline spans and fenced lines that start with `tilstand ` (a span may wrap across lines).
    const shown = [...DOC.replace(/```[\s\S]*?```/g, '').matchAll(/`tilstand ([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, ' '));
    expect(shown.length).toBeGreaterThan(8);
    const problems: string[] = [];
    for (const s of shown) {
      const usage = commands.filter((c) => s === c.words || s.startsWith(`${c.words} `)).sort((a, b) => b.words.length - a.words.length)[0];
      if (!usage) {
        problems.push(`\`tilstand ${s}\`: no such command in tilstand help`);
        continue;
      }
      // A command's usage continues on the indented lines after it.
      const start = help.indexOf(usage.line);
      const rest = help.slice(start + usage.line.length).split('\n').slice(1);
      const text = [usage.line, ...rest.slice(0, rest.findIndex((l) => !/^\s{5,}\S/.test(l)))].join('\n');
      for (const f of s.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) if (!new RegExp(`(?<![\\w-])${f[0]}(?![\\w-])`).test(text)) problems.push(`\`tilstand ${s}\`: ${f[0]} is not in the usage of tilstand ${usage.words}`);
    }
    expect(problems).toEqual([]);
  });

  it('names the topics the broker lets a module use, each the way the page says', () => {
    const acl = siteAcl('north');
    const yard: Principal = { name: 'yard', kind: 'module', module: 'yard' };
    const rows = [...DOC.matchAll(/^\| `(tilstand\/<site>\/[a-z]+\/<module>(?:\/<stream>)?)` \| ([^|]+) \|/gm)].map((m) => ({ topic: m[1]!.replace('<site>', 'north').replace('<module>', 'yard').replace('<stream>', 'doors'), by: m[2]!.trim() }));
    expect(rows.map((r) => r.topic)).toEqual(['tilstand/north/events/yard/doors', 'tilstand/north/resync/yard', 'tilstand/north/commands/yard', 'tilstand/north/acks/yard', 'tilstand/north/letters/yard']);
    for (const r of rows) {
      if (r.by === 'the module') expect(acl.canPublish(yard, r.topic), r.topic).toBe(true);
      else {
        expect(r.by).toMatch(/^Tilstand \(subscribe to it\)$/);
        expect(acl.canSubscribe(yard, r.topic), r.topic).toBe(true);
        expect(acl.canPublish(yard, r.topic), r.topic).toBe(false);
      }
    }
    // "may publish only its own events": another module's stream and another site are refused.
    expect(acl.canPublish(yard, 'tilstand/north/events/inventory/stock')).toBe(false);
    expect(acl.canPublish(yard, 'tilstand/south/events/yard/doors')).toBe(false);
  });

  it('has an example event and contract the site accepts, and quotes the refusals the site gives', () => {
    const contract = JSON.parse(block('"compatibility"')) as Contract;
    const registry = new ContractRegistry(join(dir, 'contracts'));
    registry.register(contract);
    const topic = 'tilstand/demo/events/yard/doors';
    const event = block('"op"');
    const parsed = parseEnvelope(topic, Buffer.from(event));
    expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
    const envelope = (parsed as { envelope: Envelope }).envelope;
    expect(checkEnvelopeContract(registry, envelope)).toMatchObject({ ok: true });

    // The refusal table's examples, produced by the code.
    const quoted = (reason: string): string => {
      const row = new RegExp(`^\\|[^|]+\\| dead letter \`${reason}\`[^|]*\\| \`([^\`]+)\``, 'm').exec(DOC);
      expect(row, `docs/modules.md quotes a ${reason} detail`).not.toBeNull();
      return row![1]!;
    };
    const detail = (r: unknown) => (r as { detail: string }).detail;
    expect(detail(parseEnvelope(topic, Buffer.from('{not json')))).toBe(quoted('bad_json'));
    expect(detail(parseEnvelope(topic, Buffer.alloc(300_000, 0x61)))).toBe(quoted('too_large'));
    expect(detail(checkEnvelopeContract(registry, { ...envelope, contract: { name: 'yard.doors', version: 7 } }))).toBe(quoted('no_contract'));
    expect(detail(checkEnvelopeContract(registry, { ...envelope, after: { ...envelope.after!, state: 7 } }))).toBe(quoted('contract_violation'));
    // Every reason a dead letter can have is in the table.
    for (const r of DEAD_LETTER_REASONS) expect(DOC, r).toMatch(new RegExp(`dead letter[^|]*\`${r}\``));
  });

  it('quotes the refusals of an incompatible contract change as the registry words them', () => {
    const v1 = JSON.parse(block('"compatibility"')) as Contract;
    const registry = new ContractRegistry(join(dir, 'contracts'));
    registry.register(v1);
    // v2 adds a field with a default (allowed, as the page says); v3 one without, or a new symbol.
    registry.register({ ...v1, version: 2, fields: [...v1.fields, { name: 'carrier', type: 'STRING', default: null }] });
    const v2 = registry.get('yard.doors', 2)!;
    const refusal = (c: Contract) => {
      try {
        registry.register(c);
      } catch (e) {
        return (e as Error).message;
      }
      return 'registered';
    };
    const noDefault = refusal({ ...v2, version: 3, fields: [...v2.fields, { name: 'seal_no', type: 'STRING NOT NULL' }] });
    expect(DOC.replace(/\s+/g, ' ')).toContain(`\`${noDefault}\``);
    const symbol = refusal({ ...v2, version: 3, fields: v2.fields.map((f) => (f.name === 'state' ? { ...f, symbols: [...f.symbols!, 'reserved'] } : f)) });
    const tail = /symbols reserved are unknown to the reader \(forward\)$/.exec(symbol)?.[0];
    expect(tail, symbol).toBeDefined();
    expect(DOC).toContain(`… ${tail}`);
  });

  it('has a binding example config check accepts, and quotes its refusal of another table', () => {
    const contract = JSON.parse(block('"compatibility"')) as Contract;
    const binding = JSON.parse(block('"name": "yard.doors→resources"'));
    expect(() => checkConfigBindings([binding], (n) => (n === contract.name ? contract : undefined))).not.toThrow();
    let message = '';
    try {
      checkConfigBindings([...Array(5).fill(binding), { ...binding, table: 'yard_gates' }]);
    } catch (e) {
      message = (e as Error).message;
    }
    const quoted = /`(config bindings\[5\]\.table: expected one of [^`]+)`/.exec(DOC.replace(/\s+/g, ' '))?.[1];
    expect(message).toBe(quoted);
  });

  it('writes out the seed bindings as config.json takes them, so a site adding its own can copy them', () => {
    const seed = JSON.parse(block('"name": "inventory→stock"')) as Binding[];
    expect(seed).toEqual(JSON.parse(JSON.stringify(SEED_BINDINGS)));
    expect(parseConfig({ format: 1, site: 'north', bindings: seed }).bindings).toEqual(seed);
    expect(() => checkConfigBindings(seed)).not.toThrow();
  });

  it("has a table of the site's own and its binding that config check accepts, with the rules the page gives", () => {
    const contract = JSON.parse(block('"compatibility"')) as Contract;
    const entry = JSON.parse(block('"primaryKeys": ["door_id"]')) as Record<string, unknown>;
    const binding = JSON.parse(block('"name": "yard.doors→yard_doors"')) as Binding;
    const config = parseConfig({ format: 1, site: 'north', tables: [entry], bindings: [...SEED_BINDINGS, binding] });
    const [def] = siteTableDefinitions(config);
    expect(def).toMatchObject({ name: 'yard_doors', primaryKeys: ['door_id'] });
    checkConfigBindings([binding], (n) => (n === contract.name ? contract : undefined), [def!]);
    // The names the page says are Tilstand's own are the ones refused.
    const listed = /not one of Tilstand's tables \(([^)]+)\)/.exec(DOC.replace(/\s+/g, ' '))?.[1];
    expect(listed?.split(', ').map((n) => n.replace(/`/g, '')).sort()).toEqual([...RESERVED_TABLE_NAMES].sort());
    expect(() => parseConfig({ format: 1, site: 'north', tables: [{ ...entry, table: 'decision_log' }] })).toThrow(/one of Tilstand's own tables/);
  });

  it("has a day-partitioned table of the site's own with partition expiration that config check accepts, and quotes its refusals", () => {
    const entry = JSON.parse(block('"partitionKeys"')) as Record<string, unknown>;
    const binding = JSON.parse(block('"name": "yard.door_events→door_events"')) as Binding;
    const config = parseConfig({ format: 1, site: 'north', tables: [entry], bindings: [...SEED_BINDINGS, binding] });
    const [def] = siteTableDefinitions(config);
    expect(def).toMatchObject({ name: 'door_events', primaryKeys: ['day', 'door_id'], partitionKeys: ['day'] });
    expect(def!.options['partition.expiration-time']).toBe('30 d');
    const text = DOC.replace(/\s+/g, ' ');
    // The page's keys of an entry are the ones config takes.
    for (const k of ['table', 'budgetMs', 'decision', 'confirmedBy', 'columns', 'primaryKeys', 'partitionKeys', 'options', 'comment']) expect(text).toMatch(new RegExp(`Keys of an entry.*\`${k}\``));
    // The page's refusals name tables[5]: the entry after five budgets.
    const budgets = ['work_queue', 'resources', 'stock', 'dead_letters', 'approval_inbox'].map((table) => ({ table, budgetMs: 15_000, decision: 'd', confirmedBy: 'c' }));
    const refusal = (e: Record<string, unknown>) => {
      try {
        parseConfig({ format: 1, site: 'north', tables: [...budgets, e] });
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    const notInKey = refusal({ ...entry, partitionKeys: ['state'] });
    const quotedKey = /`(config tables\[5\]\.partitionKeys\[0\]: [^`]+) …`/.exec(text)?.[1];
    expect(quotedKey).toBeDefined();
    expect(notInKey.startsWith(quotedKey!), notInKey).toBe(true);
    const strategy = refusal({ ...entry, options: { ...(entry.options as object), 'partition.expiration-strategy': 'oldest' } });
    expect(text).toContain(`\`${strategy}\``);
  });

  it('shows a command with the fields, in the order, the write-back sends, and acks it reads', () => {
    const shown = JSON.parse(block('"expires_at_ms"')) as Record<string, unknown>;
    const proposal = {
      id: shown.command_id,
      module: 'operations',
      action: shown.action,
      params: { job_id: shown.job_id, material_item: shown.material_item, material_qty: shown.material_qty },
      decision: { kind: 'approved', by: shown.requested_by, atMs: shown.approved_at_ms, comment: shown.comment },
    } as unknown as Proposal;
    const sent = WriteBack.commandOf(proposal, shown.ts_ms as number, shown.expires_at_ms as number);
    expect(Object.keys(shown)).toEqual(Object.keys(sent));
    expect(shown).toEqual(sent);
    // The two acks shown are JSON with the fields the write-back requires.
    const acks = block('"ok": true').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(acks.map((a) => [typeof a.command_id, typeof a.ok])).toEqual([['string', 'boolean'], ['string', 'boolean']]);
  });
});
