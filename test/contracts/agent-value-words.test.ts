// The agent words the stored values its messages pass (a job's status, a resource's state and kind:
// core/agents/messages.ts SHARED_MESSAGES `job.status.*`, `resource.state.*`, `resource.kind.*`),
// and the floor UI words the same values in its cells (renderer i18n/messages.ts `VALUE_WORDS`).
// Neither imports the other (scripts/check-imports.mjs): compared here, so a withdrawal reason
// says a status as the work-queue screen beside it does, and a value one of them adds is worded
// by the other too.
import { describe, expect, it } from 'vitest';
import { MESSAGE_LANGS, SHARED_MESSAGES } from '../../core/agents/messages.ts';
import { translate, VALUE_WORDS, type MessageKey } from '../../renderer/src/i18n/messages.ts';

/** The agent's message prefix for a column the renderer words. */
const COLUMNS = [
  { table: 'work_queue', column: 'status', prefix: 'job.status.' },
  { table: 'resources', column: 'state', prefix: 'resource.state.' },
  { table: 'resources', column: 'kind', prefix: 'resource.kind.' },
] as const;

/** Where a sentence needs another word than a cell: nb "jobb J-1 er nå i gang", the cell "pågår". */
const IN_A_SENTENCE: Readonly<Record<string, string>> = { 'nb job.status.in_progress': 'i gang' };

describe("the agent's words for stored values and the floor UI's", () => {
  for (const { table, column, prefix } of COLUMNS) {
    it(`words the same ${table}.${column} values, in English as stored, in nb and de as the UI does`, () => {
      const ui = VALUE_WORDS[table]![column]!;
      const agent = Object.keys(SHARED_MESSAGES).filter((id) => id.startsWith(prefix));
      expect(agent.map((id) => id.slice(prefix.length)).sort()).toEqual(Object.keys(ui).sort());
      for (const [value, key] of Object.entries(ui)) {
        const t = SHARED_MESSAGES[`${prefix}${value}`]!;
        // The English is the code: the stored text is the record (core/agents/DESIGN.md "Messages").
        expect(t.en).toBe(value);
        for (const lang of MESSAGE_LANGS.filter((l) => l !== 'en')) {
          const id = `${lang} ${prefix}${value}`;
          expect(t[lang], id).toBe(IN_A_SENTENCE[id] ?? translate(lang, key as MessageKey));
        }
      }
    });
  }
});
