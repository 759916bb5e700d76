// The renderer's only door to the site: the typed SiteApi over whichever transport is present —
// the Electron preload's bridge (`window.tilstand`), or HTTP + WebSocket to the headless server.
import type { ApiErrorKind, ApiResult, SiteApi, SiteApiMethods, SiteEvent, SiteMethod } from '../../../core/site/api.ts';

/** Close code of an event socket whose session ended (core/site/ui-server.ts). */
export const SESSION_ENDED_CODE = 4401;
/** Dispatched on `window` when the server ended the session's event socket. */
export const SESSION_ENDED_EVENT = 'tilstand:session-ended';

export class ApiError extends Error {
  constructor(
    readonly kind: ApiErrorKind,
    message: string,
  ) {
    super(message);
  }
}

interface Bridge {
  call(method: string, request: unknown): Promise<ApiResult<unknown>>;
  subscribe(listener: (e: SiteEvent) => void): () => void;
}

declare global {
  interface Window {
    tilstand?: Bridge;
  }
}

/** HTTP transport: POST /api/<method>, session cookie, a header browsers will not send cross-site. */
function httpBridge(): Bridge {
  return {
    async call(method, request) {
      const res = await fetch(`/api/${method}`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' },
        body: JSON.stringify(request ?? {}),
      });
      try {
        return (await res.json()) as ApiResult<unknown>;
      } catch {
        return { ok: false, error: { kind: 'internal', message: `HTTP ${res.status}` } };
      }
    },
    subscribe(listener) {
      let ws: WebSocket | undefined;
      let closed = false;
      let delay = 500;
      const open = () => {
        if (closed) return;
        ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/events`);
        ws.onmessage = (m) => {
          delay = 500;
          try {
            listener(JSON.parse(String(m.data)) as SiteEvent);
          } catch {
            // ignore a malformed frame
          }
        };
        ws.onclose = (ev) => {
          if (closed) return;
          // 4401: the server ended this session's events (signed out elsewhere, idle too long,
          // or the user disabled): the page asks `me` at once instead of showing stale data.
          if (ev.code === SESSION_ENDED_CODE) window.dispatchEvent(new Event(SESSION_ENDED_EVENT));
          setTimeout(open, delay);
          // Short cap: before sign-in the upgrade is refused (403), and events should flow soon after it.
          delay = Math.min(delay * 2, 2_000);
        };
      };
      open();
      return () => {
        closed = true;
        ws?.close();
      };
    },
  };
}

export function createClient(bridge: Bridge = window.tilstand ?? httpBridge()): SiteApi {
  const call = async <M extends SiteMethod>(method: M, req: SiteApiMethods[M]['req']): Promise<SiteApiMethods[M]['res']> => {
    const r = await bridge.call(method, req);
    if (!r.ok) throw new ApiError(r.error.kind, r.error.message);
    return r.value as SiteApiMethods[M]['res'];
  };
  const api = { subscribe: (l: (e: SiteEvent) => void) => bridge.subscribe(l) } as Record<string, unknown>;
  for (const m of METHODS) api[m] = (req: unknown) => call(m, (req ?? {}) as never);
  return api as unknown as SiteApi;
}

// Kept in step with SITE_METHODS in core/site/api.ts (the renderer imports types only).
const METHODS: SiteMethod[] = [
  'firstRun', 'initSite', 'signIn', 'signOut', 'me', 'status', 'listProposals', 'getProposal', 'decide', 'workQueue', 'stock',
  'setReorderPolicy', 'tables', 'tags', 'history', 'diff', 'syncStatus', 'deadLetters', 'replayDeadLetters', 'users',
  'addUser', 'disableUser', 'enableUser', 'resetSecret', 'setRoles',
];
export const RENDERER_METHODS: readonly SiteMethod[] = METHODS;
