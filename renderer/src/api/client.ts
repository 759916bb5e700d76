// The renderer's only door to the site: the typed SiteApi over whichever transport is present —
// the Electron preload's bridge (`window.tilstand`), or HTTP + WebSocket to the headless server.
import { NO_ANSWER_MESSAGE } from '../i18n/messages.ts';
import type { ApiErrorKind, ApiResult, ClientErrorReport, SiteApi, SiteApiMethods, SiteEvent, SiteMethod } from '../../../core/site/api.ts';

/**
 * The site API as the page has it: `subscribe` also takes `onResume`, called when the events flow
 * again after a break (a socket that closed, or never opened, and a new one that did): what the
 * site pushed meanwhile is lost, so the page reads again what it shows.
 */
export type ClientApi = Omit<SiteApi, 'subscribe'> & {
  subscribe(listener: (e: SiteEvent) => void, onResume?: () => void): () => void;
  /** The page's own failure, told to the site (report-error.ts; core/site/api.ts ClientErrorReport). */
  reportClientError(report: ClientErrorReport): Promise<{ id: string | null }>;
};

/** Kept in step with core/site/api.ts CLIENT_ERROR_METHOD (not a SiteMethod: the transport answers it). */
const CLIENT_ERROR_METHOD = 'reportClientError';

/** The header that carries a call's input age (kept in step with core/site/api.ts INPUT_AGE_HEADER). */
export const INPUT_AGE_HEADER = 'X-Tilstand-Input-Age';
/** Close code of an event socket whose session ended (kept in step with core/site/ui-server.ts SESSION_ENDED_CODE). */
export const SESSION_ENDED_CODE = 4401;
/** Dispatched on `window` when the server ended the session's event socket. */
export const SESSION_ENDED_EVENT = 'tilstand:session-ended';

export class ApiError extends Error {
  constructor(
    readonly kind: ApiErrorKind,
    message: string,
    /** On `unauthenticated`: the site signed the person out after this long without use (ApiErrorBody.idleMs). */
    readonly idleMs?: number,
    /** The refusal's code and params, for the common ones (ApiErrorBody.code; i18n refusalText words them). */
    readonly code?: string,
    readonly params?: Record<string, string | number>,
  ) {
    super(message);
  }
}

interface Bridge {
  /** `inputAge`: ms since the person's last input on this page, null before any (core/site/api.ts InputAge). */
  call(method: string, request: unknown, inputAge: number | null): Promise<ApiResult<unknown>>;
  /** `onResume`: see ClientApi. The Electron bridge never breaks off (IPC) and need not call it. */
  subscribe(listener: (e: SiteEvent) => void, onResume?: () => void): () => void;
}

declare global {
  interface Window {
    tilstand?: Bridge;
  }
}

/**
 * An open events socket silent for this many of the site's status intervals (a status is pushed
 * every `statusEveryMs`, 5 s unless a status says otherwise), and at least SOCKET_SILENT_MIN_MS,
 * is taken for half-open (a network blip, a proxy that dropped it: no close event comes, for
 * minutes or hours) and replaced by a new one. Kept in step with the store's SITE_QUIET_PUSHES and
 * SITE_QUIET_MIN_MS: meanwhile the store reads around it (`checkSite`), which only ever polls.
 */
export const SOCKET_SILENT_PUSHES = 3;
export const SOCKET_SILENT_MIN_MS = 15_000;
/** How often the events socket's silence is checked. */
export const SOCKET_CHECK_MS = 1_000;

/** HTTP transport: POST /api/<method>, session cookie, a header browsers will not send cross-site. */
function httpBridge(): Bridge {
  return {
    async call(method, request, inputAge) {
      // Never answered (the site restarting or stopped, the network down): fetch rejects with the
      // browser's own English ("Failed to fetch"), which the error line showed as it was.
      const res = await fetch(`/api/${method}`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1', [INPUT_AGE_HEADER]: inputAge === null ? 'none' : String(inputAge) },
        body: JSON.stringify(request ?? {}),
      }).catch(() => null);
      if (res === null) return { ok: false, error: { kind: 'internal', message: NO_ANSWER_MESSAGE } };
      try {
        return (await res.json()) as ApiResult<unknown>;
      } catch {
        return { ok: false, error: { kind: 'internal', message: `HTTP ${res.status}` } };
      }
    },
    subscribe(listener, onResume) {
      let ws: WebSocket | undefined;
      let closed = false;
      let delay = 500;
      // A socket closed (or refused) since the last one that opened: the events of the break are lost.
      let broken = false;
      // Whether the current socket opened, and when it last said anything (or opened).
      let opened = false;
      let heardAt = Date.now();
      let silentMs = SOCKET_SILENT_MIN_MS;
      const open = () => {
        if (closed) return;
        opened = false;
        ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/events`);
        ws.onopen = () => {
          opened = true;
          heardAt = Date.now();
          if (closed || !broken) return;
          broken = false;
          onResume?.();
        };
        ws.onmessage = (m) => {
          delay = 500;
          heardAt = Date.now();
          try {
            const e = JSON.parse(String(m.data)) as SiteEvent;
            const every = e?.type === 'status' ? (e.status as { statusEveryMs?: unknown } | undefined)?.statusEveryMs : undefined;
            if (typeof every === 'number' && every > 0) silentMs = Math.max(SOCKET_SILENT_PUSHES * every, SOCKET_SILENT_MIN_MS);
            listener(e);
          } catch {
            // ignore a malformed frame
          }
        };
        ws.onclose = (ev) => {
          if (closed) return;
          // Closed: no longer the watchdog's to replace. Taken for open until the reconnect below
          // (a silence before the close: a laptop woken, a hidden tab's once-a-minute timers), the
          // watchdog opened one and the reconnect another, two sockets at once.
          opened = false;
          broken = true;
          // 4401: the server ended this session's events (signed out elsewhere, idle too long,
          // or the user disabled): the page asks `me` at once instead of showing stale data.
          if (ev.code === SESSION_ENDED_CODE) window.dispatchEvent(new Event(SESSION_ENDED_EVENT));
          setTimeout(open, delay);
          // Short cap: before sign-in the upgrade is refused (403), and events should flow soon after it.
          delay = Math.min(delay * 2, 2_000);
        };
      };
      open();
      // An open socket that stays silent (half-open) is replaced: without this the page only read
      // around it (the store's `checkSite`, every 5 s the status, the inbox and the screen) for as
      // long as the page stayed open, each push up to 5 s late. One still connecting (a site
      // stopped) is left to connect: no second one meanwhile.
      const watchdog = setInterval(() => {
        if (closed || !opened || ws === undefined || Date.now() - heardAt < silentMs) return;
        const old = ws;
        old.onopen = old.onmessage = old.onclose = null;
        old.close();
        broken = true;
        open();
      }, SOCKET_CHECK_MS);
      return () => {
        closed = true;
        clearInterval(watchdog);
        ws?.close();
      };
    },
  };
}

/**
 * Whether an IPC call's rejection (the Electron bridge: `ipcRenderer.invoke`) says main never
 * answered it: the reply dropped ("reply was never sent": the handler never settled, the window
 * torn down under it) or no handler to answer ("No handler registered for …"). Electron words
 * both in English, which the error line showed as it was; they are said as the HTTP bridge says
 * a call never answered (NO_ANSWER_MESSAGE). Any other rejection keeps its text.
 */
function ipcNoAnswer(e: unknown): boolean {
  const message = e instanceof Error ? e.message : typeof e === 'string' ? e : '';
  return /reply was never sent|No handler registered for /.test(message);
}

/** `inputAge` (idle.ts trackInput) goes with every call, so the site knows whether anyone is at the screen. */
export function createClient(inputAge: () => number | null, bridge: Bridge = window.tilstand ?? httpBridge()): ClientApi {
  const call = async <M extends SiteMethod>(method: M | typeof CLIENT_ERROR_METHOD, req: SiteApiMethods[M]['req'] | ClientErrorReport): Promise<SiteApiMethods[M]['res']> => {
    const r = await bridge.call(method, req, inputAge()).catch((e: unknown): ApiResult<unknown> => {
      if (ipcNoAnswer(e)) return { ok: false, error: { kind: 'internal', message: NO_ANSWER_MESSAGE } };
      throw e;
    });
    if (!r.ok) {
      const { kind, message, idleMs, code, params } = r.error;
      throw new ApiError(kind, message, typeof idleMs === 'number' ? idleMs : undefined, typeof code === 'string' ? code : undefined, params !== null && typeof params === 'object' ? params : undefined);
    }
    return r.value as SiteApiMethods[M]['res'];
  };
  const api = { subscribe: (l: (e: SiteEvent) => void, onResume?: () => void) => bridge.subscribe(l, onResume) } as Record<string, unknown>;
  for (const m of METHODS) api[m] = (req: unknown) => call(m, (req ?? {}) as never);
  api[CLIENT_ERROR_METHOD] = (report: ClientErrorReport) => call(CLIENT_ERROR_METHOD, report) as Promise<unknown> as Promise<{ id: string | null }>;
  return api as unknown as ClientApi;
}

// Kept in step with SITE_METHODS in core/site/api.ts (the renderer imports types only;
// test/contracts/renderer-site.test.ts checks it).
const METHODS: SiteMethod[] = [
  'firstRun', 'initSite', 'signIn', 'signOut', 'me', 'status', 'listProposals', 'getProposal', 'decide', 'workQueue', 'stock',
  'setReorderPolicy', 'configChanges', 'tables', 'tags', 'history', 'diff', 'syncStatus', 'deadLetters', 'deadLetterGroups', 'replayDeadLetters', 'dismissDeadLetters', 'users',
  'addUser', 'disableUser', 'enableUser', 'resetSecret', 'setRoles',
];
