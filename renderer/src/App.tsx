import { useEffect, useState } from 'react';
import { watchIdle } from './idle.ts';
import { errorLineFocus, focusFirstOf } from './components/common.tsx';
import { ErrorBoundary } from './components/ErrorBoundary.tsx';
import { LanguagePicker } from './components/LanguagePicker.tsx';
import { SyncChip } from './components/SyncChip.tsx';
import { useApp, useT } from './context.tsx';
import { alarmText, formatClock, formatDuration, formatNumber, signedInText, type MessageKey } from './i18n/messages.ts';
import { DeadLetters } from './screens/DeadLetters.tsx';
import { FirstRun } from './screens/FirstRun.tsx';
import { History } from './screens/History.tsx';
import { Inbox } from './screens/Inbox.tsx';
import { SignIn } from './screens/SignIn.tsx';
import { Stock } from './screens/Stock.tsx';
import { Sync } from './screens/Sync.tsx';
import { Tables } from './screens/Tables.tsx';
import { Users } from './screens/Users.tsx';
import { WorkQueue } from './screens/WorkQueue.tsx';
import { FIRST_RUN_RETRY_MS, selectAlarms, selectBreaches, selectErrorLine, selectIsAdmin, selectWaitingCount, SITE_CHECK_MS, type Screen } from './store/store.ts';

const SCREENS: Array<{ id: Screen; label: MessageKey; admin?: boolean }> = [
  { id: 'inbox', label: 'nav.inbox' },
  { id: 'work', label: 'nav.work' },
  { id: 'stock', label: 'nav.stock' },
  { id: 'tables', label: 'nav.tables' },
  { id: 'history', label: 'nav.history' },
  { id: 'sync', label: 'nav.sync' },
  { id: 'deadLetters', label: 'nav.deadLetters' },
  { id: 'users', label: 'nav.users', admin: true },
];

export function App() {
  const t = useT();
  const user = useApp((s) => s.user);
  const screen = useApp((s) => s.screen);
  const go = useApp((s) => s.go);
  const error = useApp(selectErrorLine);
  const clearError = useApp((s) => s.clearError);
  // Closing the error line gives the focus back to where the person was (`errorLineFocus`): with
  // its button gone it fell to the page.
  const [errorFocus] = useState(() => errorLineFocus());
  useEffect(() => errorFocus.watch(), [errorFocus]);
  const closeError = () => {
    clearError();
    errorFocus.closed();
  };
  const alarms = useApp(selectAlarms);
  const lang = useApp((s) => s.lang);
  // The inbox heading's count (open and deferred): the two never say different numbers.
  const waiting = useApp(selectWaitingCount);
  const isAdmin = useApp(selectIsAdmin);
  // What the header shows of the status, each selected alone: the status as shown (aged by this
  // page's clock while the site does not answer, selectShownStatus) is a new one every second then,
  // and selected whole it rendered App and the open screen again each second.
  const hasStatus = useApp((s) => s.status !== null);
  const siteId = useApp((s) => s.status?.siteId ?? null);
  const breaches = useApp(selectBreaches);
  const quietSinceMs = useApp((s) => s.siteQuiet?.sinceMs ?? null);
  const checkSite = useApp((s) => s.checkSite);
  const signOut = useApp((s) => s.signOut);
  const loadMe = useApp((s) => s.loadMe);
  const firstRun = useApp((s) => s.firstRun);
  const loadFirstRun = useApp((s) => s.loadFirstRun);
  const firstRunUnread = useApp((s) => s.firstRunUnread);
  useEffect(() => void loadFirstRun(), [loadFirstRun]);
  const loadStatus = useApp((s) => s.loadStatus);
  const loadProposals = useApp((s) => s.loadProposals);
  useEffect(() => void loadMe(), [loadMe]);
  // Signed in (or a reload's session taken up), the inbox is shown and the focus, its field gone
  // with the sign-in screen, fell to the page, where Tab started at the header's language picker:
  // it goes to the inbox's heading, so Tab goes on to the most urgent proposal's row. One put
  // elsewhere meanwhile stays.
  const signedInAs = user?.name ?? null;
  useEffect(() => {
    if (signedInAs !== null && typeof document !== 'undefined') focusFirstOf(['.inbox-list > h2'], document, { ifDropped: true });
  }, [signedInAs]);
  useEffect(() => {
    if (user) {
      void loadStatus();
      void loadProposals();
    }
  }, [user, loadStatus, loadProposals]);
  // Whether the site still speaks (a status every few seconds), asked every second while signed in:
  // gone quiet, the header says so and the ages shown grow (store `checkSite`, `siteQuiet`).
  useEffect(() => {
    if (!user) return undefined;
    const h = setInterval(checkSite, SITE_CHECK_MS);
    return () => clearInterval(h);
  }, [user, checkSite]);
  // A shared floor PC: no touch, click, key or pointer movement for the site's `ui.idleSignOutMs` signs out.
  const idleMs = useApp((s) => s.status?.ui?.idleSignOutMs ?? 0);
  const signOutIdle = useApp((s) => s.signOutIdle);
  useEffect(() => {
    if (!user || idleMs <= 0) return undefined;
    return watchIdle(window, idleMs, () => void signOutIdle(idleMs));
  }, [user, idleMs, signOutIdle]);
  if (firstRun === null) {
    // Not yet answered: the store asks again every few seconds; said, a blank page looked dead.
    return (
      <main className="signin" aria-busy="true">
        {firstRunUnread && (
          <p role="alert" className="error">
            {t('app.unread', { every: formatDuration(lang, FIRST_RUN_RETRY_MS) })}{' '}
            <button type="button" onClick={() => void loadFirstRun()}>
              {t('crash.retry')}
            </button>
          </p>
        )}
      </main>
    );
  }
  // Set up but still starting (the first-run backend's answer): the sign-in waits for the site.
  if (!firstRun.initialized || firstRun.siteId === null || firstRun.starting === true) return <FirstRun />;
  if (!user) return <SignIn />;
  return (
    <div className="app">
      <header>
        <strong className="site">{siteId !== null ? `${t('app.title')} · ${siteId}` : t('app.title')}</strong>
        {/* No status yet this session: nothing to tell (it said "● within budget" of tables it knew nothing of). */}
        <span className={`chip ${breaches > 0 ? 'chip-alert' : ''}`} data-testid="freshness">
          {!hasStatus ? '…' : breaches > 0 ? `⚠ ${breaches} ${t('tables.breach')}` : `● ${t('tables.within')}`}
        </span>
        <SyncChip />
        {quietSinceMs !== null && (
          <span className="chip chip-alert" role="status" data-testid="site-quiet" title={t('app.siteQuietHint')}>
            ⚠ {t('app.siteQuiet', { time: formatClock(lang, quietSinceMs) })}
          </span>
        )}
        <span className="spacer" />
        <LanguagePicker />
        <span className="muted">{signedInText(lang, user)}</span>
        <button onClick={() => void signOut()}>{t('signOut')}</button>
      </header>
      <nav aria-label={t('nav.label')}>
        {SCREENS.filter((s) => !s.admin || isAdmin).map((s) => (
          <button key={s.id} className={screen === s.id ? 'current' : ''} aria-current={screen === s.id ? 'page' : undefined} onClick={() => go(s.id)} data-screen={s.id}>
            {t(s.label)}
            {/* In the language's number format, as the inbox's own count beside it ("1.304", not "1304"). */}
            {s.id === 'inbox' && waiting > 0 ? <span className="count"> {formatNumber(lang, waiting)}</span> : null}
          </button>
        ))}
      </nav>
      {alarms.length > 0 && (
        <section className="alarms" role="alert" aria-label={t('alarm.title')}>
          {alarms.map((a, i) => (
            <p key={i}>⚠ {alarmText(lang, a)}</p>
          ))}
        </section>
      )}
      {/* A click on it closes it, and so does its button, which a keyboard reaches too and which
          shows that it can be closed. */}
      {error && (
        <p role="alert" className="error" onClick={closeError}>
          <span>{error}</span>
          <button type="button" className="close-error" aria-label={t('error.close')} title={t('error.close')} onClick={closeError}>
            ✖
          </button>
        </p>
      )}
      <main>
        {/* A screen that fails to render says so under a header and navigation that still work;
            keyed by screen, so another screen picked starts without the failure. */}
        <ErrorBoundary key={screen} scope="screen" name={screen}>
          {screen === 'inbox' && <Inbox />}
          {screen === 'work' && <WorkQueue />}
          {screen === 'stock' && <Stock />}
          {screen === 'tables' && <Tables />}
          {screen === 'history' && <History />}
          {screen === 'sync' && <Sync />}
          {screen === 'deadLetters' && <DeadLetters />}
          {screen === 'users' && isAdmin && <Users />}
        </ErrorBoundary>
      </main>
    </div>
  );
}
