// The floor UI words a table restored from an older tag (the status's `restoredFromTag`) by its
// name: the inbox's two tables, which the site writes itself and no module resends, have their own
// sentences (renderer messages.ts `syncRestoredKey`). The renderer cannot import core's names, so
// it spells them; a table renamed in core would fall to the sentence that says its modules resent
// what they held.
import { describe, expect, it } from 'vitest';
import { APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE } from '../../core/inbox/index.ts';
import { syncRestoredKey } from '../../renderer/src/i18n/messages.ts';

describe("the renderer's names of the inbox's tables, for a table restored from an older tag", () => {
  it('are core’s', () => {
    expect(syncRestoredKey(APPROVAL_INBOX_TABLE)).toBe('sync.restored.approval_inbox');
    expect(syncRestoredKey(DECISION_LOG_TABLE)).toBe('sync.restored.decision_log');
    expect(syncRestoredKey('stock')).toBe('sync.restored.table');
  });
});
