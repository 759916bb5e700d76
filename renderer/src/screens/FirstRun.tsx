// The first screen on a new data directory: the site id and the first administrator. After
// `initSite` the server hands over to the real site; while the first-run backend answers
// `starting`, this screen says so and polls `firstRun` until the site itself answers, and App then
// shows the sign-in screen. (Taking the setup's own answer for the site, the page offered the
// sign-in at once, to a server that was restarting.)
import { useEffect, useState, type FormEvent } from 'react';
import { LanguagePicker } from '../components/LanguagePicker.tsx';
import { useApp, useT } from '../context.tsx';
import { selectFirstRunErrorText } from '../store/store.ts';

export function FirstRun() {
  const t = useT();
  const firstRun = useApp((s) => s.firstRun);
  const error = useApp(selectFirstRunErrorText);
  const initSite = useApp((s) => s.initSite);
  const loadFirstRun = useApp((s) => s.loadFirstRun);
  // One initSite at a time (a double tap sent two, and the second's refusal stood under the form).
  const busy = useApp((s) => s.settingUp);
  // A directory `tilstand restore` filled can only become the restored site: its id is given.
  const restored = firstRun?.initialized === false ? firstRun.restoredSite : null;
  const [siteId, setSiteId] = useState(restored ?? '');
  useEffect(() => {
    if (restored) setSiteId(restored);
  }, [restored]);
  const [name, setName] = useState('');
  const [pin, setPin] = useState('');
  const [pin2, setPin2] = useState('');
  const [mismatch, setMismatch] = useState(false);
  // Set up (here, or by a page or command before): the site is starting; asked again until it answers.
  const starting = firstRun?.initialized === true && firstRun.starting === true ? firstRun.siteId : null;
  useEffect(() => {
    if (!starting) return;
    const id = setInterval(() => void loadFirstRun(), 1000);
    return () => clearInterval(id);
  }, [starting, loadFirstRun]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (pin !== pin2) return setMismatch(true);
    setMismatch(false);
    await initSite(siteId.trim(), name.trim(), pin);
  };
  if (starting) {
    return (
      <main className="signin">
        <h1>{t('firstRun.title')}</h1>
        <p role="status">{t('firstRun.starting', { site: starting })}</p>
      </main>
    );
  }
  return (
    <main className="signin first-run">
      <h1>{t('firstRun.title')}</h1>
      <p>{restored ? t('firstRun.restored', { site: restored }) : t('firstRun.intro')}</p>
      <form onSubmit={(e) => void submit(e)}>
        <label>
          {t('firstRun.siteId')}
          <input name="siteId" required pattern="[A-Za-z0-9][A-Za-z0-9_\-]{0,63}" autoComplete="off" value={siteId} readOnly={restored !== null} onChange={(e) => setSiteId(e.target.value)} />
        </label>
        <label>
          {t('firstRun.adminName')}
          <input name="adminName" required autoComplete="username" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          {t('firstRun.adminPin')}
          <input name="adminPin" required type="password" inputMode="numeric" pattern="[0-9]{4,12}" autoComplete="new-password" value={pin} onChange={(e) => setPin(e.target.value)} />
        </label>
        <label>
          {t('firstRun.adminPin2')}
          <input name="adminPin2" required type="password" inputMode="numeric" pattern="[0-9]{4,12}" autoComplete="new-password" value={pin2} onChange={(e) => setPin2(e.target.value)} />
        </label>
        {(mismatch || error) && (
          <p role="alert" className="error">
            {mismatch ? t('firstRun.mismatch') : error}
          </p>
        )}
        {/* aria-disabled while the setup is on its way (the store sends no second), not disabled:
            chromium drops the focus of a button made disabled to the page, and a refused setup (a
            PIN too easy to guess) left it there (as Sign in: floor-ui-focus-kept.e2e). */}
        <button type="submit" className="primary" aria-disabled={busy || undefined}>
          {t('firstRun.submit')}
        </button>
      </form>
      <LanguagePicker />
    </main>
  );
}
