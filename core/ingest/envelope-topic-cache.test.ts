// parseEventTopic remembers valid topics only: a flood of unique bad topics (any client may send
// them, each up to a packet long) held memory for each and filled the cache, after which the
// site's own topics were parsed anew for every event.
import { expect, it } from 'vitest';
import { parseEventTopic } from './envelope.ts';

it('keeps caching valid topics after more unique invalid topics than the cache holds', () => {
  for (let i = 0; i < 10_001; i++) expect(parseEventTopic(`tilstand/s1/events/bad topic ${i}/stock`)).toBeUndefined();
  const first = parseEventTopic('tilstand/s1/events/inventory/stock');
  expect(first).toEqual({ site: 's1', module: 'inventory', stream: 'stock' });
  // Cached parts are one frozen object, given to every caller.
  expect(Object.isFrozen(first)).toBe(true);
  expect(parseEventTopic('tilstand/s1/events/inventory/stock')).toBe(first);
});
