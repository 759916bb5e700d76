// The Electron security checklist, as data and small pure functions the main process applies
// (https-free: the app is served from its own `tilstand://app/` scheme, never file://).
//   - context isolation, sandbox, no node integration, web security on, no webview, no DevTools;
//   - a strict Content-Security-Policy on every response;
//   - navigation, new windows and downloads blocked; permission requests and checks denied;
//   - IPC answered only for frames of our own origin, every payload validated (ipc.ts).

import { resolve, sep } from 'node:path';

export const APP_SCHEME = 'tilstand';
export const APP_ORIGIN = `${APP_SCHEME}://app`;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
].join('; ');

export function webPreferences(preloadPath: string): Record<string, unknown> {
  return {
    preload: preloadPath,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    // No DevTools (Electron's default menu opens them with Ctrl+Shift+I, hidden menu bar or not): on
    // a shared floor PC whoever opened them could leave a script in the page that acts as the next
    // person to sign in there — an admin's sign-in then adds the script's own admin. The renderer
    // is debugged in a browser against the headless server instead.
    devTools: false,
    spellcheck: false,
  };
}

/** True for URLs inside the app (our scheme and host); everything else is refused. */
export function isAppUrl(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.host === 'app';
  } catch {
    return false;
  }
}

/**
 * Maps an app URL to a file below `root`, refusing anything that escapes it (undefined: 404).
 * A backslash, NUL or colon is refused as text, whatever the host: Windows (a packaged target)
 * takes `\` as a separator, so `..%5C..%5C` would climb out there while a Linux test sees one
 * name; a colon names a drive or a file's alternate stream there. No renderer file has any of them.
 */
export function resolveAppFile(root: string, url: string): string | undefined {
  if (!isAppUrl(url)) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(new URL(url).pathname);
  } catch {
    return undefined; // a malformed escape
  }
  if (path === '/' || path === '') path = '/index.html';
  if (/[\\\0:]/.test(path) || path.split('/').some((seg) => seg === '..')) return undefined;
  // With '/' the only separator left, the file resolved against the root must stay inside it.
  const base = resolve(root);
  const file = resolve(base, `.${path}`);
  return file.startsWith(base + sep) ? file : undefined;
}
