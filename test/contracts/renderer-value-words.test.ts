// The renderer words the known values of Tilstand's own tables' columns (i18n/messages.ts
// `VALUE_WORDS`: History's cells and the inbox's evidence) from its own copy of those values, as it
// imports only types from core (scripts/check-imports.mjs). Checked here against the site's: a
// value core adds is then worded, not shown as stored in one place and in words in another.
import { describe, expect, it } from 'vitest';
import { COMMAND_STATES, PROPOSAL_STATUSES, RISK_LEVELS } from '../../core/inbox/proposal.ts';
import { ROLES } from '../../core/inbox/users.ts';
import { DEAD_LETTERS_TABLE } from '../../core/ingest/dead-letters.ts';
import { DEAD_LETTER_REASONS } from '../../core/ingest/envelope.ts';
import { OPERATIONS_JOBS, OPERATIONS_RESOURCES } from '../../core/ingest/seed-contracts.ts';
import type { Contract } from '../../core/ingest/contracts.ts';
import { cellText, KNOWN_ACTIONS, VALUE_WORDS } from '../../renderer/src/i18n/messages.ts';

const worded = (table: string, column: string): string[] => Object.keys(VALUE_WORDS[table]?.[column] ?? {}).sort();
const symbols = (c: Contract, field: string): string[] => [...(c.fields.find((f) => f.name === field)?.symbols ?? [])].sort();

describe("the renderer's words for the values of Tilstand's own tables", () => {
  it('words every status, state and kind the operations contracts allow', () => {
    expect(worded('work_queue', 'status')).toEqual(symbols(OPERATIONS_JOBS, 'status'));
    expect(worded('resources', 'state')).toEqual(symbols(OPERATIONS_RESOURCES, 'state'));
    expect(worded('resources', 'kind')).toEqual(symbols(OPERATIONS_RESOURCES, 'kind'));
  });

  it("words every dead letter's reason and status", () => {
    expect(worded('dead_letters', 'reason')).toEqual([...DEAD_LETTER_REASONS].sort());
    const status = DEAD_LETTERS_TABLE.fields.find((f) => f.name === 'status')?.description;
    expect(worded('dead_letters', 'status')).toEqual(status!.split('|').map((s) => s.trim()).sort());
  });

  it("words the approval inbox's risks, statuses, decisions, roles and command states", () => {
    expect(worded('approval_inbox', 'risk')).toEqual([...RISK_LEVELS].sort());
    expect(worded('approval_inbox', 'command_state')).toEqual([...COMMAND_STATES].sort());
    expect(worded('approval_inbox', 'decided_role')).toEqual([...ROLES].sort());
    // agent_status is open or withdrawn (inbox-tables.ts agentColumns); a decision the rest of the statuses.
    expect(worded('approval_inbox', 'agent_status')).toEqual(['open', 'withdrawn']);
    expect([...worded('approval_inbox', 'agent_status'), ...worded('approval_inbox', 'decision')].sort()).toEqual([...PROPOSAL_STATUSES].sort());
    expect(worded('approval_inbox', 'action')).toEqual([...KNOWN_ACTIONS].sort());
  });

  it('shows each of them in words in nb and de, the stored value kept for the title', () => {
    for (const [table, columns] of Object.entries(VALUE_WORDS)) {
      for (const [column, words] of Object.entries(columns)) {
        for (const value of Object.keys(words)) {
          for (const lang of ['nb', 'de'] as const) {
            const cell = cellText(lang, table, column, 'STRING', value);
            // "team" is the same word in Norwegian: no title needed where the words are the stored ones.
            if (cell.raw === undefined) expect(cell.text, `${table}.${column} ${value} in ${lang}`).toBe(value);
            else expect(cell.raw).toBe(value);
          }
        }
      }
    }
    expect(cellText('de', 'work_queue', 'status', 'STRING', 'in_progress')).toEqual({ text: 'in Arbeit', raw: 'in_progress' });
  });
});
