import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { createClient } from './api/client.ts';
import { StoreContext } from './context.tsx';
import { createAppStore } from './store/store.ts';

const api = createClient();
const store = createAppStore(api);
api.subscribe((e) => store.getState().applyEvent(e));
document.documentElement.lang = store.getState().lang;

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>
  </StrictMode>,
);
