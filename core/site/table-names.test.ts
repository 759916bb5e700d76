// Tilstand's own tables are named in two places that may not import each other: core/ingest's
// RESERVED_TABLE_NAMES (a config.json table may not take one of these names) and core/sync's
// TILSTAND_TABLES (restore names every other table as one of the site's own and drafts its
// config.json entry). core/site sees both: they must name the same tables, the ones the site
// makes (the seed tables, the inbox's two, dead_letters).
import { describe, expect, it } from 'vitest';
import { DEAD_LETTERS_TABLE_NAME } from '../ingest/dead-letters.ts';
import { SEED_TABLES } from '../ingest/seed-tables.ts';
import { RESERVED_TABLE_NAMES } from '../ingest/site-tables.ts';
import { APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE } from '../inbox/index.ts';
import { TILSTAND_TABLES } from '../sync/restore.ts';

describe("Tilstand's own table names", () => {
  it('are the same in core/ingest (reserved for config.json) and core/sync (restore), and are the tables the site makes', () => {
    const made = [...SEED_TABLES.map((t) => t.name), APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE, DEAD_LETTERS_TABLE_NAME].sort();
    expect([...RESERVED_TABLE_NAMES].sort()).toEqual(made);
    expect([...TILSTAND_TABLES].sort()).toEqual(made);
  });
});
