// Two agent runs in one millisecond (`…-080000-000` and `…-080000-000-2`, core/agents runIdAt and
// its `-n` suffix): their proposals have the same createdMs, and the site lists them by
// core/inbox's `compareProposalIds` (run id, its numbers as numbers, then n as a number). The
// inbox sorted them again by n alone, so the later run's first proposal stood before the earlier
// run's third — the list, N and Next, and where the focus went on after a decision, in another
// order than the site's (and than the cut it sent). test/contracts/renderer-proposal-order.test.ts
// checks the renderer's copy against core's function.
import { describe, expect, it } from 'vitest';
import type { ProposalView } from '../../../core/site/api.ts';
import { compareProposalIds } from './proposal-order.ts';
import { sortByUrgency } from './store.ts';

const at = (id: string, createdMs = 1000) => ({ id, status: 'open', risk: 'low', createdMs }) as ProposalView;

describe('the inbox orders proposals made in one millisecond as the site does', () => {
  it('puts the earlier run first, whatever the numbers within the runs', () => {
    const ids = ['P-20261130-080000-000-2-1', 'P-20261130-080000-000-3', 'P-20261130-080000-000-1', 'P-20261130-080000-000-10-1', 'P-20261130-080000-000-2-2'];
    expect(sortByUrgency(ids.map((id) => at(id))).map((p) => p.id)).toEqual([
      'P-20261130-080000-000-1',
      'P-20261130-080000-000-3',
      'P-20261130-080000-000-2-1',
      'P-20261130-080000-000-2-2',
      'P-20261130-080000-000-10-1',
    ]);
  });
  it('still keeps one run in its own order (…-2 before …-10) and an older proposal first', () => {
    expect(sortByUrgency([at('P-r-10'), at('P-r-2'), at('P-r-1'), at('P-s-1', 999)]).map((p) => p.id)).toEqual(['P-s-1', 'P-r-1', 'P-r-2', 'P-r-10']);
    expect(compareProposalIds('P-a-1', 'P-a-1')).toBe(0);
  });
});
