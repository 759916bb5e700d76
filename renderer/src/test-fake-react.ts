// The fakes of the renderer tests that call a screen's function without a DOM: React's hooks and
// zustand's useStore replaced by the least that lets a function component run once. vi.mock is
// hoisted per test file, so each file still declares its mocks; their factories take these:
//
//   vi.mock('react', async (importOriginal) => (await import('../test-fake-react.ts')).fakeReact(await importOriginal(), () => holder.store));
//   vi.mock('zustand', async (importOriginal) => (await import('../test-fake-react.ts')).fakeZustand(await importOriginal()));
//
// This module imports no React and no zustand (it is loaded while they are being mocked).
import type { AppStore } from './store/store.ts';

/**
 * React with its hooks replaced: effects not run, state never set (its initial value), a ref
 * holding its initial value, the context `store()` (the StoreContext the screens read), memos and
 * callbacks as given. `overrides` replace any of them (effects that run, state that keeps).
 */
export function fakeReact(real: object, store: () => AppStore | null, overrides: Record<string, unknown> = {}): object {
  const hooks = {
    useEffect: () => undefined,
    useLayoutEffect: () => undefined,
    useState: (i: unknown) => [typeof i === 'function' ? (i as () => unknown)() : i, () => undefined],
    useRef: (i: unknown) => ({ current: i }),
    useContext: () => store(),
    useSyncExternalStore: (_s: unknown, get: () => unknown) => get(),
    useDebugValue: () => undefined,
    useCallback: (f: unknown) => f,
    useMemo: (f: () => unknown) => f(),
    ...overrides,
  };
  return { ...real, ...hooks, default: { ...real, ...hooks } };
}

/** zustand with `useStore` reading the store's state as it is now (no subscription). */
export function fakeZustand(real: object): object {
  return { ...real, useStore: (store: AppStore, selector: (s: unknown) => unknown) => selector(store.getState()) };
}
