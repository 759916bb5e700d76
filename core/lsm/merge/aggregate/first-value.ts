// `first_value`: the first input in merge order, even a null one. Keeps whether it has seen an
// input for the current key (reset per key). Cannot retract.

import type { FieldAggregator } from './field-aggregator.ts';

export class FirstValueAggregator implements FieldAggregator {
  readonly name = 'first_value';
  readonly ignoresNull = false;
  private initialized = false;

  reset(): void {
    this.initialized = false;
  }

  agg(acc: unknown, input: unknown): unknown {
    if (this.initialized) return acc;
    this.initialized = true;
    return input ?? null;
  }
}
