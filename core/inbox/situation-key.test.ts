// situationKey: the same situation keys the same, however a rule built its key parameters.

import { describe, expect, it } from 'vitest';
import { situationKey } from './proposal.ts';

describe('situationKey', () => {
  it('keys an object-valued key parameter by its content, not the order its properties were written in', () => {
    // A site's own rule file may build a key parameter as an object (a bin's coordinates, a row's
    // JSON column): the same bin written { aisle, shelf } by one row and { shelf, aisle } by the
    // next is one situation, not a second proposal beside the first.
    const a = situationKey('move-bin', 'move', { bin: { aisle: 'A', shelf: 3, at: [{ x: 1, y: 2 }] } });
    const b = situationKey('move-bin', 'move', { bin: { shelf: 3, at: [{ y: 2, x: 1 }], aisle: 'A' } });
    expect(b).toBe(a);
    // Scalars key as before (the keys of open proposals stay): a string quoted, a number bare.
    expect(situationKey('assign-job', 'assign_job', { job_id: 'J-2', n: 3 })).toBe('assign-job|assign_job|job_id="J-2"|n=3');
    // Different content still keys apart.
    expect(situationKey('move-bin', 'move', { bin: { aisle: 'A', shelf: 4 } })).not.toBe(situationKey('move-bin', 'move', { bin: { aisle: 'A', shelf: 3 } }));
  });
});
