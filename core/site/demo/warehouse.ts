// The demo warehouse: a small site (20 items, 4 locations, 6 resources, 30 jobs) that the four
// simulated modules share as their starting point. Pure data; every module derives its own state
// from it and from its seeded generator.

export const DEMO_LOCATIONS = ['A-01', 'A-02', 'B-01', 'DOCK'] as const;

export const DEMO_ITEMS: readonly string[] = Array.from({ length: 20 }, (_, i) => `ITEM-${String(i + 1).padStart(3, '0')}`);

export const DEMO_CAPABILITIES = ['pick', 'pack', 'forklift'] as const;

export interface DemoResource {
  readonly resource_id: string;
  readonly kind: 'machine' | 'team';
  readonly capability: (typeof DEMO_CAPABILITIES)[number];
}

export const DEMO_RESOURCES: readonly DemoResource[] = [
  { resource_id: 'FORK-1', kind: 'machine', capability: 'forklift' },
  { resource_id: 'FORK-2', kind: 'machine', capability: 'forklift' },
  { resource_id: 'PACK-1', kind: 'machine', capability: 'pack' },
  { resource_id: 'PICK-A', kind: 'team', capability: 'pick' },
  { resource_id: 'PICK-B', kind: 'team', capability: 'pick' },
  { resource_id: 'PACK-T', kind: 'team', capability: 'pack' },
];

export const DEMO_JOBS_COUNT = 30;

/** TIMESTAMP(3) text as the contracts want it. */
export const isoMs = (ms: number): string => new Date(ms).toISOString().slice(0, 23);
