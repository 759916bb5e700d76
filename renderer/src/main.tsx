import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { createClient, SESSION_ENDED_EVENT } from './api/client.ts';
import { followWhileSignedIn } from './api/follow.ts';
import { ErrorBoundary } from './components/ErrorBoundary.tsx';
import { StoreContext } from './context.tsx';
import { createAppStore } from './store/store.ts';
import { trackInput } from './idle.ts';
import { createReporter, reportUncaught, setReporter, shownScreen } from './report-error.ts';

/** package.json's version, put in by the build (build/vite.renderer.config.ts `define`). */
declare const __TILSTAND_VERSION__: string | undefined;

const api = createClient(trackInput(window));
const store = createAppStore(api);
// What fails on this page is told to the site (its log keeps it under an id the error boundary
// shows), from the first screen on: the sign-in and first-run screens can fail too.
const reporter = createReporter((r) => api.reportClientError(r), typeof __TILSTAND_VERSION__ === 'string' ? __TILSTAND_VERSION__ : undefined);
setReporter(reporter);
reportUncaught(window, reporter, () => ({ screen: shownScreen(store.getState()), lang: store.getState().lang }));
followWhileSignedIn(store, (l, onResume) => api.subscribe(l, onResume));
// A session can end without this page doing anything (an admin disabled the user, another tab
// signed out, it idled out): ask `me` when the server says so, and every 30 s while signed in
// (Electron pushes no close), so the floor PC falls back to sign-in instead of showing old data.
const recheck = () => {
  if (store.getState().user) void store.getState().loadMe();
};
window.addEventListener(SESSION_ENDED_EVENT, recheck);
setInterval(recheck, 30_000);
document.documentElement.lang = store.getState().lang;

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <StoreContext.Provider value={store}>
      {/* The last resort: the shell itself failed (header, alarms); a message and Reload, not a white page. */}
      <ErrorBoundary scope="app" name="app">
        <App />
      </ErrorBoundary>
    </StoreContext.Provider>
  </StrictMode>,
);
