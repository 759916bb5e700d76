// The one IPC contract between main and renderer: a single invoke channel carrying
// (method, request, input age) of the typed site API, and one event channel. The preload builds
// the bridge from these names; main answers through `handleCall`, which checks the sender's
// origin and validates every payload before the backend sees it. A failure that is no
// SiteApiError answers a generic text with an error id; the log gets the whole error.
// `reportClientError` (core/site/api.ts CLIENT_ERROR_METHOD: the page's own failure) is answered
// here, never by the backend, as the headless server answers it: validated as there, written to
// the log through the window's ClientErrorLog (the same rate bounds), open before a sign-in.

import { ApiValidationError, validateCall, validateClientErrorReport, validateInputAge } from '../core/site/api-validate.ts';
import type { ApiErrorKind, ApiResult, SessionContext, SiteBackend } from '../core/site/api.ts';
import { CLIENT_ERROR_METHOD, SiteApiError } from '../core/site/api.ts';
import { callIn, logToStderr, reportInternalError, type ClientErrorLog } from '../core/site/internal-error.ts';
import { isAppUrl } from './security.ts';

export const CALL_CHANNEL = 'tilstand:call';
export const EVENT_CHANNEL = 'tilstand:event';

export async function handleCall(
  backend: SiteBackend,
  session: SessionContext,
  senderUrl: string | undefined,
  method: unknown,
  request: unknown,
  inputAge?: unknown,
  /** Where a failure that is no SiteApiError is written, whole, under its error id; stderr when absent. */
  log: (line: string) => void = logToStderr,
  /** The window's log of the page's own failures; absent: `reportClientError` is an unknown method. */
  clientErrors?: ClientErrorLog,
): Promise<ApiResult<unknown>> {
  if (!isAppUrl(senderUrl)) return failure('forbidden', 'IPC from a frame outside the app is refused');
  if (method === CLIENT_ERROR_METHOD && clientErrors) {
    let report;
    try {
      report = validateClientErrorReport(request);
    } catch (e) {
      return failure('invalid', (e as Error).message);
    }
    // One window is one caller: signed in, its budget is that person's session in the window (the
    // next person to sign in there starts with a budget of their own, and the line that counts
    // what was dropped names who sent it); else the window (SessionContext.source) is the address
    // the headless server would count it by.
    const user = session.user?.name ?? null;
    const id = clientErrors.report({ user, ...(user !== null ? { session: `window:${user}` } : {}), source: session.source ?? 'window' }, report);
    return { ok: true, value: { id } };
  }
  let call;
  let input;
  try {
    call = validateCall(method, request);
    // The page's input age (core/site/api.ts InputAge); the preload always passes one, so an
    // absent one is taken as "no input on this page yet", never as use of the screen.
    input = validateInputAge(inputAge) ?? null;
  } catch (e) {
    // With its code and field (api.ts `input.*`), as the headless server sends it: the floor UI words it.
    if (e instanceof ApiValidationError) return { ok: false, error: e.body() };
    return failure('invalid', (e as Error).message);
  }
  try {
    const value = await backend.call(call.method, call.req as never, session, input);
    return { ok: true, value };
  } catch (e) {
    if (e instanceof SiteApiError) return { ok: false, error: e.body() };
    // Nobody foresaw it (the SiteService answers such failures itself; the first-run backend's
    // initSite failing on EACCES does not): its text may name a path of the data directory, so
    // the window gets an id and the log the whole error (core/site/internal-error.ts).
    return failure('internal', reportInternalError(log, callIn(call.method, session.user), e));
  }
}

function failure(kind: ApiErrorKind, message: string): ApiResult<never> {
  return { ok: false, error: { kind, message } };
}
