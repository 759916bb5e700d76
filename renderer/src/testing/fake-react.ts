// The fakes of the renderer tests that call a screen's function without a DOM: React's hooks and
// zustand's useStore replaced by the least that lets a function component run once. vi.mock is
// hoisted per test file, so each file still declares its mocks; their factories take these (the
// paths as a test in src/screens/ writes them):
//
//   vi.mock('react', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store));
//   vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));
//
// This module imports no React and no zustand (it is loaded while they are being mocked). Only
// tests import it (a `testing/` folder: scripts/check-imports.mjs `TEST_ONLY`).
import type { AppStore } from '../store/store.ts';

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

/**
 * useState, useReducer and useRef that keep their values from render to render, as React does:
 * each hook call of a render has its slot in `of().slots`, by its order (`of().at`, which the
 * test sets to 0 before each render; a getter: vi.mock's factory runs before the test's holder exists); a setter or dispatch changes the slot for the next render.
 * For `fakeReact`'s overrides, where a test renders a screen again after its state changed.
 */
export function slotHooks(of: () => { slots: unknown[]; at: number }): Record<string, unknown> {
  const slot = (init: () => unknown): unknown => {
    const holder = of();
    const k = holder.at++;
    if (!(k in holder.slots)) holder.slots[k] = init();
    return holder.slots[k];
  };
  return {
    useState: (i: unknown) => {
      const holder = of();
      const k = holder.at;
      const v = slot(() => (typeof i === 'function' ? (i as () => unknown)() : i));
      return [v, (n: unknown) => void (holder.slots[k] = typeof n === 'function' ? (n as (p: unknown) => unknown)(holder.slots[k]) : n)];
    },
    useReducer: (reducer: (s: unknown, a: unknown) => unknown, i: unknown) => {
      const holder = of();
      const k = holder.at;
      const v = slot(() => i);
      return [v, (a: unknown) => void (holder.slots[k] = reducer(holder.slots[k], a))];
    },
    useRef: (i: unknown) => slot(() => ({ current: i })),
  };
}

/** zustand with `useStore` reading the store's state as it is now (no subscription). */
export function fakeZustand(real: object): object {
  return { ...real, useStore: (store: AppStore, selector: (s: unknown) => unknown) => selector(store.getState()) };
}

/** An element of a rendered tree, as the screen tests without a DOM read and press it. */
export interface FakeElement {
  type: unknown;
  props: {
    children?: unknown;
    className?: string;
    name?: string;
    value?: string;
    type?: string;
    disabled?: boolean;
    onClick?: () => void;
    onChange?: (e: { target: { value: string } }) => void;
    onSubmit?: (e: { preventDefault(): void }) => void;
    [k: string]: unknown;
  };
}

/** The elements of a rendered tree (function components called, as React would). */
export const elementsOf = (node: unknown): FakeElement[] => {
  if (Array.isArray(node)) return node.flatMap(elementsOf);
  if (typeof node !== 'object' || node === null || !('props' in node)) return [];
  const el = node as FakeElement;
  if (typeof el.type === 'function') return elementsOf((el.type as (p: object) => unknown)(el.props));
  return [el, ...elementsOf(el.props.children)];
};

/** The text of a rendered tree, its strings and numbers joined (function components not called). */
export const textOf = (node: unknown): string =>
  typeof node === 'string' || typeof node === 'number'
    ? String(node)
    : Array.isArray(node)
      ? node.map(textOf).join('')
      : typeof node === 'object' && node !== null && 'props' in node
        ? textOf((node as FakeElement).props.children)
        : '';

/** Lets what a press started settle: the store's calls and their replies, in microtasks. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
