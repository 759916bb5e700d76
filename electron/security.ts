// The Electron security checklist, as data and small pure functions the main process applies
// (https-free: the app is served from its own `tilstand://app/` scheme, never file://).
//   - context isolation, sandbox, no node integration, web security on, no webview;
//   - a strict Content-Security-Policy on every response;
//   - navigation and new windows blocked; permission requests denied;
//   - IPC answered only for frames of our own origin, every payload validated (ipc.ts).

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

/** Maps an app URL to a file below `root`, refusing anything that escapes it. */
export function resolveAppFile(root: string, url: string): string | undefined {
  if (!isAppUrl(url)) return undefined;
  let path = decodeURIComponent(new URL(url).pathname);
  if (path === '/' || path === '') path = '/index.html';
  if (path.includes('\0') || path.split('/').some((seg) => seg === '..')) return undefined;
  return `${root}${path}`;
}
