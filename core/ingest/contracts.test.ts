import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bindingView, checkEnvelopeContract, ContractError, ContractRegistry, validate, widens, type Contract, type Compatibility } from './contracts.ts';
import { parseType } from '../lsm/types.ts';
import { SEED_CONTRACTS, OPERATIONS_JOBS } from './seed-contracts.ts';
import type { Envelope } from './envelope.ts';
import { fsyncedDuring } from '../lsm/testing/fsync-spy.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-contracts-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const v = (version: number, compatibility: Compatibility, fields: Contract['fields']): Contract => ({ name: 'stock.level', version, compatibility, fields });
const ITEM = { name: 'item', type: 'STRING NOT NULL' };

describe('ContractRegistry', () => {
  it('stores contracts as <dir>/<name>/v<n>.json and loads them again', () => {
    const reg = new ContractRegistry(join(dir, 'contracts'));
    for (const c of SEED_CONTRACTS) reg.register(c);
    expect(JSON.parse(readFileSync(join(dir, 'contracts', 'operations.jobs', 'v1.json'), 'utf8'))).toEqual(OPERATIONS_JOBS);
    const again = new ContractRegistry(join(dir, 'contracts'));
    expect(again.list().map((s) => s.name)).toEqual([
      'commerce.reservations',
      'inventory.stock',
      'operations.jobs',
      'operations.resources',
      'procurement.inbound',
    ]);
    expect(again.get('operations.jobs', 1)).toEqual(OPERATIONS_JOBS);
    expect(again.latest('operations.jobs')?.version).toBe(1);
    expect(again.get('operations.jobs', 2)).toBeUndefined();
    expect(again.latest('nope')).toBeUndefined();
  });

  it('names a file in contracts/ named like a contract, instead of failing with ENOTDIR', () => {
    const contracts = join(dir, 'contracts');
    new ContractRegistry(contracts).register(OPERATIONS_JOBS);
    writeFileSync(join(contracts, 'readme.md'), 'the modules\' contracts\n');
    expect(() => new ContractRegistry(contracts)).toThrow(ContractError);
    expect(() => new ContractRegistry(contracts)).toThrow(`${join(contracts, 'readme.md')} is not a directory: a contract's versions are the files ${join(contracts, 'readme.md', 'v<N>.json')} (move or remove it)`);
    // A name no contract can have is left alone.
    rmSync(join(contracts, 'readme.md'));
    writeFileSync(join(contracts, 'README.md'), 'x');
    expect(new ContractRegistry(contracts).get('operations.jobs', 1)).toEqual(OPERATIONS_JOBS);
  });

  it('names a version file written with a leading zero (v01.json), instead of failing on a v1.json that is not there', () => {
    const contracts = join(dir, 'contracts');
    new ContractRegistry(contracts).register(OPERATIONS_JOBS);
    const folder = join(contracts, 'operations.jobs');
    renameSync(join(folder, 'v1.json'), join(folder, 'v01.json'));
    expect(() => new ContractRegistry(contracts)).toThrow(ContractError);
    expect(() => new ContractRegistry(contracts)).toThrow(`${join(folder, 'v01.json')}: a contract's version files are named v<N>.json without leading zeros; rename it v1.json`);
    // Beside the file of its right name it is one version twice, and named so (not "no v2").
    writeFileSync(join(folder, 'v1.json'), readFileSync(join(folder, 'v01.json')));
    expect(() => new ContractRegistry(contracts)).toThrow(`${join(folder, 'v01.json')}: a contract's version files are named v<N>.json without leading zeros; v1.json is there too: keep one of them`);
  });

  it('names a hand-edited contract file that is not JSON, with the line and column', () => {
    const reg = new ContractRegistry(join(dir, 'contracts'));
    for (const c of SEED_CONTRACTS) reg.register(c);
    const file = join(dir, 'contracts', 'inventory.stock', 'v1.json');
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n').length).toBeGreaterThan(3);
    writeFileSync(file, text.replace(/,\n/, '\n')); // the first line's comma lost
    const err = (() => {
      try {
        new ContractRegistry(join(dir, 'contracts'));
      } catch (e) {
        return e as ContractError;
      }
      throw new Error('opened');
    })();
    expect(err).toBeInstanceOf(ContractError);
    expect(err.contract).toBe('inventory.stock');
    expect(err.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON: .* \\(line 3, column \\d+\\)$`));
  });

  it('treats an identical re-registration as a no-op and refuses duplicates with other content', () => {
    const reg = new ContractRegistry(dir);
    reg.register(v(1, 'BACKWARD', [ITEM]));
    expect(reg.register(v(1, 'BACKWARD', [ITEM])).version).toBe(1);
    expect(() => reg.register(v(1, 'BACKWARD', [ITEM, { name: 'x', type: 'INT', default: null }]))).toThrow(
      "contract 'stock.level' v1 is already registered with other content",
    );
  });

  it('writes a new version durably (the file and its folder fsynced) and never over a file already there', () => {
    const reg = new ContractRegistry(dir);
    const synced = fsyncedDuring(() => reg.register(v(1, 'BACKWARD', [ITEM])));
    const folder = join(dir, 'stock.level');
    expect(synced.some((p) => p.startsWith(join(folder, '.v1.json.')))).toBe(true); // the temporary file linked to v1.json
    expect(synced).toContain(folder);
    // A v2 file that appeared behind the registry's back is not overwritten.
    writeFileSync(join(folder, 'v2.json'), 'written by someone else');
    expect(() => reg.register(v(2, 'BACKWARD', [ITEM]))).toThrow(/v2.json exists but was not loaded/);
    expect(readFileSync(join(folder, 'v2.json'), 'utf8')).toBe('written by someone else');
  });

  it('refuses version gaps', () => {
    const reg = new ContractRegistry(dir);
    expect(() => reg.register(v(2, 'BACKWARD', [ITEM]))).toThrow("contract 'stock.level' v2 would leave a gap: the next version is v1");
    reg.register(v(1, 'BACKWARD', [ITEM]));
    expect(() => reg.register(v(3, 'BACKWARD', [ITEM]))).toThrow(/would leave a gap: the next version is v2/);
  });

  it('refuses a directory with a gap, and a file whose content names another version', () => {
    mkdirSync(join(dir, 'stock.level'));
    writeFileSync(join(dir, 'stock.level', 'v2.json'), JSON.stringify(v(2, 'NONE', [ITEM])));
    expect(() => new ContractRegistry(dir)).toThrow(/has v2 but no v1/);
    writeFileSync(join(dir, 'stock.level', 'v1.json'), JSON.stringify(v(2, 'NONE', [ITEM])));
    expect(() => new ContractRegistry(dir)).toThrow(/holds contract 'stock.level' v2/);
  });

  it.each([
    [{ ...v(1, 'BACKWARD', [ITEM]), name: 'Bad Name' }, /name: expected/],
    [v(1, 'SIDEWAYS' as Compatibility, [ITEM]), /compatibility: expected one of BACKWARD/],
    [v(1, 'NONE', []), /fields: expected 1\.\.512 fields/],
    [v(1, 'NONE', [ITEM, ITEM]), /field 'item' appears twice/],
    [v(1, 'NONE', [{ name: '__proto__', type: 'INT' }]), /field name "__proto__" is not allowed/],
    [v(1, 'NONE', [{ name: 'q', type: 'NUMBER' }]), /field 'q': unknown/],
    [v(1, 'NONE', [{ name: 'q', type: 'INT NOT NULL', default: null }]), /field 'q': default must not be null/],
    [v(1, 'NONE', [{ name: 'q', type: 'INT', default: 'x' }]), /field 'q': default expected an integer/],
    [v(1, 'NONE', [{ name: 'q', type: 'INT', symbols: ['a'] }]), /symbols must be a non-empty list of strings on a string type/],
    [v(1, 'NONE', [{ name: 'q', type: 'STRING', symbols: ['a'], default: 'b' }]), /default expected one of a, got "b"/],
  ])('refuses a malformed contract (%#)', (c, why) => {
    expect(() => new ContractRegistry(dir).register(c as Contract)).toThrow(why);
  });
});

describe('compatibility (Confluent semantics, Paimon types)', () => {
  const reg = () => new ContractRegistry(dir);

  it('BACKWARD: adding a field without a default breaks it, naming the field', () => {
    const r = reg();
    r.register(v(1, 'BACKWARD', [ITEM]));
    r.register(v(2, 'BACKWARD', [ITEM, { name: 'loc', type: 'STRING', default: null }]));
    const err = (() => {
      try {
        r.register(v(3, 'BACKWARD', [ITEM, { name: 'loc', type: 'STRING', default: null }, { name: 'qty', type: 'INT' }]));
      } catch (e) {
        return e as ContractError;
      }
      throw new Error('expected a refusal');
    })();
    expect(err.message).toBe("contract 'stock.level' v3 is not BACKWARD compatible with v2: field 'qty' was added without a default");
    expect(err.field).toBe('qty');
  });

  it('BACKWARD: removing a field is fine; widening INT→BIGINT is fine; narrowing is not', () => {
    const r = reg();
    r.register(v(1, 'BACKWARD', [ITEM, { name: 'qty', type: 'INT' }, { name: 'note', type: 'STRING' }]));
    r.register(v(2, 'BACKWARD', [ITEM, { name: 'qty', type: 'BIGINT' }]));
    expect(() => r.register(v(3, 'BACKWARD', [ITEM, { name: 'qty', type: 'INT' }]))).toThrow(
      "contract 'stock.level' v3 is not BACKWARD compatible with v2: field 'qty' changed (type BIGINT → INT): for v3 readers of v2 data, BIGINT does not widen to INT",
    );
  });

  it('BACKWARD: nullable → NOT NULL is refused; NOT NULL → nullable is fine', () => {
    const r = reg();
    r.register(v(1, 'BACKWARD', [ITEM, { name: 'qty', type: 'INT NOT NULL' }]));
    r.register(v(2, 'BACKWARD', [ITEM, { name: 'qty', type: 'INT' }]));
    expect(() => r.register(v(3, 'BACKWARD', [ITEM, { name: 'qty', type: 'INT NOT NULL' }]))).toThrow(/field 'qty' changed .*nullable data cannot be read as NOT NULL/);
  });

  it('FORWARD: removing a field without a default breaks it; adding is fine', () => {
    const r = reg();
    r.register(v(1, 'FORWARD', [ITEM, { name: 'qty', type: 'INT' }]));
    r.register(v(2, 'FORWARD', [ITEM, { name: 'qty', type: 'INT' }, { name: 'extra', type: 'STRING' }]));
    expect(() => r.register(v(3, 'FORWARD', [ITEM, { name: 'extra', type: 'STRING' }]))).toThrow(
      "contract 'stock.level' v3 is not FORWARD compatible with v2: field 'qty' was removed but had no default in v2",
    );
  });

  it('FORWARD: widening the writer breaks old readers', () => {
    const r = reg();
    r.register(v(1, 'FORWARD', [ITEM, { name: 'qty', type: 'INT' }]));
    expect(() => r.register(v(2, 'FORWARD', [ITEM, { name: 'qty', type: 'BIGINT' }]))).toThrow(/v1 readers of v2 data, BIGINT does not widen to INT/);
  });

  it('FULL: needs both directions (added fields need defaults; removed ones must have had them)', () => {
    const r = reg();
    r.register(v(1, 'FULL', [ITEM, { name: 'qty', type: 'INT', default: null }]));
    expect(() => r.register(v(2, 'FULL', [ITEM, { name: 'qty', type: 'INT', default: null }, { name: 'x', type: 'INT' }]))).toThrow(
      /not FULL compatible with v1: field 'x' was added without a default \(backward\)/,
    );
    r.register(v(2, 'FULL', [ITEM, { name: 'x', type: 'INT', default: 0 }])); // qty had a default: removable
  });

  it('TRANSITIVE checks every earlier version, the plain mode only the latest', () => {
    // v1 has 'qty' (no default); v2 drops it; v3 re-adds it without default.
    const plain = reg();
    plain.register(v(1, 'BACKWARD', [ITEM, { name: 'qty', type: 'STRING' }]));
    plain.register(v(2, 'BACKWARD', [ITEM]));
    // BACKWARD against v2 only: v2 data lacks qty and the default fills it; v1's STRING qty is not looked at.
    expect(() => plain.register(v(3, 'BACKWARD', [ITEM, { name: 'qty', type: 'INT', default: null }]))).not.toThrow();

    rmSync(dir, { recursive: true, force: true });
    const trans = reg();
    trans.register(v(1, 'BACKWARD_TRANSITIVE', [ITEM, { name: 'qty', type: 'STRING' }]));
    trans.register(v(2, 'BACKWARD_TRANSITIVE', [ITEM]));
    // v1 data has qty as STRING: an INT reader cannot read it.
    expect(() => trans.register(v(3, 'BACKWARD_TRANSITIVE', [ITEM, { name: 'qty', type: 'INT', default: null }]))).toThrow(
      /not BACKWARD_TRANSITIVE compatible with v1: field 'qty' changed \(type STRING → INT\).*STRING does not widen to INT/,
    );
  });

  it('symbols: a reader must know every symbol the writer may send', () => {
    const r = reg();
    r.register(v(1, 'FULL', [ITEM, { name: 'state', type: 'STRING NOT NULL', symbols: ['free', 'busy'] }]));
    expect(() => r.register(v(2, 'FULL', [ITEM, { name: 'state', type: 'STRING NOT NULL', symbols: ['free', 'busy', 'down'] }]))).toThrow(
      /field 'state' changed: for v1 readers of v2 data, symbols down are unknown to the reader \(forward\)/,
    );
  });

  it('NONE checks nothing', () => {
    const r = reg();
    r.register(v(1, 'NONE', [ITEM]));
    expect(() => r.register(v(2, 'NONE', [{ name: 'other', type: 'BOOLEAN NOT NULL' }]))).not.toThrow();
  });

  it.each([
    ['TINYINT', 'INT', true],
    ['INT', 'BIGINT', true],
    ['BIGINT', 'INT', false],
    ['INT', 'DECIMAL(10, 0)', true],
    ['INT', 'DECIMAL(12, 3)', false],
    ['INT', 'DOUBLE', true],
    ['INT', 'FLOAT', false],
    ['BIGINT', 'DOUBLE', false],
    ['FLOAT', 'DOUBLE', true],
    ['DECIMAL(10, 2)', 'DECIMAL(12, 3)', true],
    ['DECIMAL(10, 2)', 'DECIMAL(10, 3)', false],
    ['VARCHAR(10)', 'VARCHAR(20)', true],
    ['VARCHAR(20)', 'VARCHAR(10)', false],
    ['CHAR(3)', 'STRING', true],
    ['STRING', 'VARCHAR(10)', false],
    ['BINARY(4)', 'BYTES', true],
    ['TIMESTAMP(3)', 'TIMESTAMP(6)', true],
    ['TIMESTAMP(6)', 'TIMESTAMP(3)', false],
    ['TIMESTAMP(3)', 'TIMESTAMP(3) WITH LOCAL TIME ZONE', false],
    ['TIMESTAMP(3)', 'DATE', false],
    ['DATE', 'TIMESTAMP(3)', false],
    ['INT', 'STRING', false],
  ])('%s widens to %s: %s', (from, to, ok) => {
    expect(widens(parseType(from), parseType(to))).toBe(ok);
  });
});

describe('validate', () => {
  const c = OPERATIONS_JOBS;
  it('fills defaults and converts values', () => {
    const r = validate(c, { job_id: 'J1', status: 'released', capability: 'weld', due_at: '2026-12-01T08:00:00.000Z' }, 'after');
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.record).toMatchObject({ job_id: 'J1', priority: 0, blocked_reason: null, due_at: '2026-12-01T08:00:00.000Z' });
      expect(r.values.due_at).toBe(Date.UTC(2026, 11, 1, 8) * 1000);
    }
  });

  it('reports every bad field with its path: missing, unknown, wrong type, bad symbol, number for a timestamp', () => {
    const r = validate(c, { status: 'lost', capability: 3, priority: 2 ** 40, due_at: 1764000000000, colour: 'red' }, 'after');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toEqual([
        { path: 'after.job_id', message: 'missing (required: no default)' },
        { path: 'after.status', message: 'expected one of released|blocked|in_progress|done, got "lost"' },
        { path: 'after.capability', message: 'expected a string, got number 3' },
        { path: 'after.priority', message: 'expected an integer in -2147483648..2147483647, got number 1099511627776' },
        { path: 'after.due_at', message: 'expected ISO-8601 text, got a number' },
        { path: 'after.colour', message: "not a field of contract 'operations.jobs' v1" },
      ]);
    }
  });

  it('refuses nested objects as values, and a NOT NULL field sent as null', () => {
    const r = validate(c, { job_id: { a: 1 }, status: 'done', capability: null });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.path)).toEqual(['job_id', 'capability']);
  });
});

describe('checkEnvelopeContract', () => {
  const env = (patch: Partial<Envelope>): Envelope => ({
    op: 'u',
    before: null,
    after: { job_id: 'J1', status: 'done', capability: 'weld' },
    source: { module: 'operations', stream: 'jobs', seq: 1 },
    ts_ms: 0,
    contract: { name: 'operations.jobs', version: 1 },
    ...patch,
  });

  it('no_contract for an unregistered version, contract_violation with the first path, defaults filled on success', () => {
    const reg = new ContractRegistry(dir);
    reg.register(OPERATIONS_JOBS);
    expect(checkEnvelopeContract(reg, env({ contract: { name: 'operations.jobs', version: 2 } }))).toMatchObject({
      ok: false,
      reason: 'no_contract',
      detail: "contract 'operations.jobs' v2 is not registered",
    });
    const bad = checkEnvelopeContract(reg, env({ before: { job_id: 'J1' }, after: { job_id: 'J1', status: 'x', capability: 'c' } }));
    expect(bad).toMatchObject({ ok: false, reason: 'contract_violation', path: 'before.status' });
    // The detail names every error, in order: all that a module's owner must fix.
    if (!bad.ok) expect(bad.detail).toBe('before.status: missing (required: no default); before.capability: missing (required: no default); after.status: expected one of released|blocked|in_progress|done, got "x"');
    const good = checkEnvelopeContract(reg, env({}));
    expect(good.ok && good.envelope.after).toMatchObject({ priority: 0, assigned_resource: null });
  });

  it('reads an event of an older version as the latest: fields added since with a default get it, and a version registered later counts', () => {
    const reg = new ContractRegistry(dir);
    const v1 = { name: 'stock.level', version: 1, compatibility: 'BACKWARD' as const, fields: [{ name: 'sku', type: 'STRING NOT NULL' }, { name: 'qty', type: 'INT' , default: null }] };
    reg.register(v1);
    const event = (version: number, after: Record<string, unknown>): Envelope => env({ after, before: { ...after }, contract: { name: 'stock.level', version } });
    // Only v1 registered: nothing added.
    const only = checkEnvelopeContract(reg, event(1, { sku: 'A', qty: 1 }));
    expect(only.ok && only.envelope.after).toEqual({ sku: 'A', qty: 1 });
    reg.register({ ...v1, version: 2, fields: [...v1.fields, { name: 'note', type: 'STRING', default: null }] });
    const r2 = checkEnvelopeContract(reg, event(1, { sku: 'A', qty: 1 }));
    expect(r2.ok && r2.envelope.contract.version).toBe(1); // the writer's version stays recorded
    expect(r2.ok && [r2.envelope.before, r2.envelope.after]).toEqual([
      { sku: 'A', qty: 1, note: null },
      { sku: 'A', qty: 1, note: null },
    ]);
    // v3 (FORWARD-only, so no default needed) adds a field without a default: not filled, the binding decides.
    reg.register({ ...v1, version: 3, compatibility: 'FORWARD', fields: [...v1.fields, { name: 'note', type: 'STRING', default: null }, { name: 'bin', type: 'STRING NOT NULL' }, { name: 'zone', type: 'STRING', default: 'Z1' }] });
    const r3 = checkEnvelopeContract(reg, event(1, { sku: 'A', qty: 1 }));
    expect(r3.ok && r3.envelope.after).toEqual({ sku: 'A', qty: 1, note: null, zone: 'Z1' });
    // An event of the latest version is validated as before (its own defaults).
    const latest = checkEnvelopeContract(reg, event(3, { sku: 'A', qty: 1, bin: 'B' }));
    expect(latest.ok && latest.envelope.after).toEqual({ sku: 'A', qty: 1, note: null, bin: 'B', zone: 'Z1' });
  });

  it('reads a field a later version dropped with the default an earlier version gave it, for events of every version', () => {
    const reg = new ContractRegistry(dir);
    const v1 = { name: 'stock.level', version: 1, compatibility: 'FULL_TRANSITIVE' as const, fields: [{ name: 'sku', type: 'STRING NOT NULL' }, { name: 'bin', type: 'STRING', default: 'B0' }, { name: 'qty', type: 'INT', default: null }] };
    reg.register(v1);
    reg.register({ ...v1, version: 2, fields: v1.fields.filter((f) => f.name !== 'bin') }); // FULL_TRANSITIVE: bin had a default
    const event = (version: number, after: Record<string, unknown>): Envelope => env({ after, contract: { name: 'stock.level', version } });
    const r2 = checkEnvelopeContract(reg, event(2, { sku: 'A', qty: 1 }));
    expect(r2.ok && r2.envelope.after).toEqual({ sku: 'A', qty: 1, bin: 'B0' });
    const r1 = checkEnvelopeContract(reg, event(1, { sku: 'A', bin: 'B7' }));
    expect(r1.ok && r1.envelope.after).toEqual({ sku: 'A', bin: 'B7', qty: null });
    // A binding may still map it: the view it is checked against has every version's fields.
    expect(bindingView(reg, 'stock.level')!.fields.map((f) => f.name)).toEqual(['sku', 'qty', 'bin']);
    expect(bindingView(reg, 'stock.level')!.version).toBe(2);
  });

  it('a contract violation names up to eight errors and counts the rest', () => {
    const reg = new ContractRegistry(dir);
    const fields = Array.from({ length: 11 }, (_, i) => ({ name: `f${i}`, type: 'INT NOT NULL' }));
    reg.register({ name: 'wide.stream', version: 1, compatibility: 'NONE', fields });
    const bad = checkEnvelopeContract(reg, env({ contract: { name: 'wide.stream', version: 1 }, after: {} }));
    if (bad.ok) throw new Error('expected a violation');
    expect(bad.errors).toHaveLength(11);
    const listed = Array.from({ length: 8 }, (_, i) => `after.f${i}: missing (required: no default)`).join('; ');
    expect(bad.detail).toBe(`${listed} (and 3 more)`);
  });
});
