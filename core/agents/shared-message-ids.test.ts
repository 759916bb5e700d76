// A rule's message ids start with its own id (messageCatalog); the shared fragments every rule's
// texts use (messages.ts SHARED_MESSAGES: `recheck.withdrawn`, `job.status.blocked`,
// `table.stock`, …) start with words a rule may take as its id (`recheck`, `job`, `table`). A rule
// of a site's own that carried such an id put its template in the fragment's place for every
// rule: each withdrawal of an installed rule said its text, or — with other parameters — could
// not be made, so no proposal of any rule was withdrawn. It is refused where the rule set is checked.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRuleSet } from './agent.ts';
import { DEFAULT_RULES, loadRuleFiles } from './index.ts';
import type { Rule } from './rule.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-agents-shared-ids-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const named = (id: string, messageId: string): Rule =>
  ({ id, version: '1', description: 'x', messages: { [messageId]: { en: 'gone', nb: 'borte', de: 'weg' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false }) as Rule;

describe('a rule whose message id is a shared fragment', () => {
  it('is refused by the checks an Agent makes of its rules', () => {
    for (const [id, m] of [['recheck', 'recheck.withdrawn'], ['job', 'job.status.blocked'], ['table', 'table.stock'], ['tables', 'tables.list']] as const) {
      expect(() => checkRuleSet([...DEFAULT_RULES, named(id, m)])).toThrow(`rule ${id}: message id '${m}' is one of the shared fragments every rule's texts use (core/agents messages.ts); expected an id of its own under '${id}.'`);
    }
    // An id of its own under the same rule id is its own.
    expect(checkRuleSet([...DEFAULT_RULES, named('recheck', 'recheck.own-note')])['recheck.own-note']).toEqual({ en: 'gone', nb: 'borte', de: 'weg' });
  });

  it('is refused in a rule file, naming the file', async () => {
    writeFileSync(join(dir, 'recheck.mjs'), `export default { id: 'recheck', version: '1', description: 'x', messages: { 'recheck.withdrawn': { en: '{why}', nb: '{why}', de: '{why}' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n`);
    await expect(loadRuleFiles(['recheck.mjs'], dir)).rejects.toThrow(/^rule file recheck\.mjs: rule recheck: message id 'recheck\.withdrawn' is one of the shared fragments/);
  });
});
