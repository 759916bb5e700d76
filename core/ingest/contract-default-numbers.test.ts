// A DECIMAL field's default given as a JSON number of more than 15 significant digits. The check
// of numbers JSON cannot carry exactly (contract-numbers.test.ts) is for what a module sends: the
// contract registers with such a default, and a stored one keeps loading. But the default, filled
// in for an event that leaves the field out, went through the same check: every such event became
// a contract violation telling the module to "send DECIMAL(20, 4) as a string", a field it never
// sent. Both paths of `validate` (fast and generic) are checked, on a contract read back from its
// registry file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContractRegistry, validate, validateGeneric, type Contract } from './contracts.ts';

const PRICES: Contract = {
  name: 'yard.prices',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  fields: [
    { name: 'id', type: 'STRING NOT NULL' },
    { name: 'price', type: 'DECIMAL(20, 4)', default: 123456789012.3456 },
  ],
};

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-contract-default-numbers-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('a DECIMAL default of more than 15 significant digits', () => {
  it('registers, and fills in for an event without the field instead of refusing it', () => {
    new ContractRegistry(join(dir, 'contracts')).register(PRICES);
    const stored = new ContractRegistry(join(dir, 'contracts')).get('yard.prices', 1)!;
    for (const check of [validate, validateGeneric]) {
      const r = check(stored, { id: 'p1' });
      expect(r).toMatchObject({ ok: true, record: { id: 'p1', price: 123456789012.3456 } });
      expect(r.ok && r.values.price).toBe(1234567890123456n);
      // The module's own number of that length is still refused.
      expect(check(stored, { id: 'p2', price: 123456789012.3456 })).toMatchObject({ ok: false, errors: [{ path: 'price' }] });
    }
  });
});
