import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { AppState, AppStore } from './store/store.ts';
import { translate, type MessageKey } from './i18n/messages.ts';

export const StoreContext = createContext<AppStore | null>(null);

export function useApp<T>(selector: (s: AppState) => T): T {
  const store = useContext(StoreContext);
  if (!store) throw new Error('StoreContext missing');
  return useStore(store, selector);
}

/** The translate function for the current language. */
export function useT(): (key: MessageKey, vars?: Record<string, string | number>) => string {
  const lang = useApp((s) => s.lang);
  return (key, vars) => translate(lang, key, vars);
}
