// The rules' typed views of rows: made once per row object, frozen, the same values as the row.
import { describe, expect, it } from 'vitest';
import { job, resource } from './rows.ts';

describe('job and resource views', () => {
  const jr = Object.freeze({ job_id: 'J-1', status: 'released', blocked_reason: null, capability: 'pack', material_item: null, material_qty: '5', priority: 3, due_at: '2026-12-01T08:00:00.000', assigned_resource: null });
  const rr = Object.freeze({ resource_id: 'R-1', kind: 'team', capability: 'pack', state: 'free', since: '2026-12-01T07:00:00' });

  it('converts a row (TIMESTAMP text as UTC, integer text as a number)', () => {
    expect(job(jr)).toEqual({ job_id: 'J-1', status: 'released', blocked_reason: null, capability: 'pack', material_item: null, material_qty: 5, priority: 3, due_at_ms: Date.UTC(2026, 11, 1, 8), assigned_resource: null });
    expect(resource(rr)).toEqual({ resource_id: 'R-1', kind: 'team', capability: 'pack', state: 'free', since_ms: Date.UTC(2026, 11, 1, 7) });
  });

  it('is made once per row object and frozen, so every rule and later run shares it and none can change it', () => {
    expect(job(jr)).toBe(job(jr));
    expect(resource(rr)).toBe(resource(rr));
    expect(Object.isFrozen(job(jr))).toBe(true);
    expect(Object.isFrozen(resource(rr))).toBe(true);
    expect(() => {
      (job(jr) as { priority: number }).priority = 9;
    }).toThrow(TypeError);
    // An equal row that is another object gets its own view.
    const copy = { ...jr, priority: 7 };
    expect(job(copy)).not.toBe(job(jr));
    expect(job(copy).priority).toBe(7);
  });
});
