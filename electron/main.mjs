// The Electron entry (`npm run electron`, and the packaged app's main): registers tsx so the
// TypeScript sources load as they are, imports the real `electron`, and runs the main process
// (electron/main-process.ts): the Site in this process, the SiteService over IPC, the window.
// The site's V8 flags (core/site/v8-flags.ts) are set first, as bin/tilstand.mjs sets them; a
// shell started without the site's launch settings relaunches itself with them first.
// `npm run electron` and the packaged app run this file's bundle, dist/electron/main.mjs
// (scripts/build-site.mjs), where `register` is a no-op; `electron electron/main.mjs` runs the
// sources through tsx.
//   npm run electron -- --data /var/lib/tilstand --kiosk
import { register } from 'tsx/esm/api';

register();
(await import('../core/site/v8-flags.ts')).applySiteV8Flags();
const electronModule = await import('electron');
const electron = electronModule.default ?? electronModule;
const { mainFailure, relaunchWithLaunchSettings, runMain } = await import('./main-process.ts');
// Started without the site's launch settings (core/site/v8-flags.ts SITE_LAUNCH): relaunch once
// with them, before the single-instance lock and the site.
if (!relaunchWithLaunchSettings(electron.app, process.argv, process.env, process.platform, (l) => console.error(`tilstand: ${l}`))) {
  const { Site } = await import('../core/site/site.ts');
  try {
    await runMain(electron, process.argv.slice(1), { startSite: (o) => Site.start(o) });
  } catch (e) {
    // A start the site's log or runMain said already is not printed again (mainFailure).
    const { line, code } = mainFailure(e);
    if (line !== undefined) console.error(`tilstand: ${line}`);
    electron.app.exit(code);
  }
}
