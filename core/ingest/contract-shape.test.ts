// A contract that no event could ever satisfy, or whose refusal misquotes what it was given, is
// refused when it is registered, naming the field or option and what was expected.
//   - ARRAY and MAP field types registered, and every event that sent a value for the field was a
//     contract violation ("expected a ARRAY<STRING> value, got an array"): contracts have no
//     nested types (CONTRACTS.md, "Open problems"), so the mistake showed only in dead letters.
//     A stored contract file with one still loads (refusing it would stop the site's start).
//   - `version: "1"` was refused as "got 1", the text shown as the number it was not.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContractError, ContractRegistry, type Contract } from './contracts.ts';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-contract-shape-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const withField = (type: string): Contract => ({
  name: 'yard.tags',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  fields: [
    { name: 'id', type: 'STRING NOT NULL' },
    { name: 'tags', type, default: null },
  ],
});

describe('contract shapes refused at registration', () => {
  it.each(['ARRAY<STRING>', 'MAP<STRING, INT>'])('a %s field, naming the field and what was expected', (type) => {
    const registry = new ContractRegistry(join(dir, 'contracts'));
    let error: unknown;
    try {
      registry.register(withField(type));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ContractError);
    expect((error as ContractError).field).toBe('tags');
    expect((error as Error).message).toBe(
      `contract 'yard.tags' v1: field 'tags': type ${type} is nested; contracts have no nested types (expected a scalar Paimon type: STRING, INT, DECIMAL(p, s), TIMESTAMP(3), …)`,
    );
    expect(registry.latest('yard.tags')).toBeUndefined();
  });

  it('a stored contract file with a nested field still loads', () => {
    const folder = join(dir, 'contracts', 'yard.tags');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'v1.json'), JSON.stringify(withField('ARRAY<STRING>')));
    expect(new ContractRegistry(join(dir, 'contracts')).latest('yard.tags')?.version).toBe(1);
  });

  it('a version given as text is named as text', () => {
    const registry = new ContractRegistry(join(dir, 'contracts'));
    expect(() => registry.register({ ...withField('STRING'), version: '1' as unknown as number })).toThrow(
      `contract 'yard.tags' v1: version: expected a positive integer, got a string "1"`,
    );
  });
});
