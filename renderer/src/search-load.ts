// When a screen with a search box asks the site for its rows: at once when it opens (the rows it
// shows until then are the last ones the store had, or none), then a quarter second after the last
// change of its search or filter (typing is not a request per key). The Work queue and Stock
// screens used to wait the quarter second on opening too.

import { useEffect, useRef } from 'react';
import { GLOBAL_TIMERS, type IdleTimers as Timers } from './idle.ts';

/** How long a change of a search waits for the next keystroke before it asks the site. */
export const SEARCH_DEBOUNCE_MS = 250;

export interface SearchLoader {
  /** The search has its first value (runs `load` now) or a new one (runs it after SEARCH_DEBOUNCE_MS unless changed again). */
  changed(load: () => void): void;
  /** Drops a load that is waiting (the search changed again, or the screen closed). */
  cancel(): void;
}

export function searchLoader(timers: Timers = GLOBAL_TIMERS): SearchLoader {
  let first = true;
  let handle: unknown;
  const cancel = (): void => {
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = undefined;
  };
  return {
    changed(load) {
      cancel();
      if (first) {
        first = false;
        load();
        return;
      }
      handle = timers.setTimeout(() => {
        handle = undefined;
        load();
      }, SEARCH_DEBOUNCE_MS);
    },
    cancel,
  };
}

/** Runs `load` as `searchLoader` says, whenever one of `deps` (the search and its filters) changes. */
export function useSearchLoad(load: () => void, deps: readonly unknown[]): void {
  const loader = useRef<SearchLoader | null>(null);
  loader.current ??= searchLoader();
  useEffect(() => {
    const l = loader.current!;
    l.changed(load);
    return () => l.cancel();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `deps` are the caller's
  }, deps);
}
