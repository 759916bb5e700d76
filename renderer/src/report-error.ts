// The floor UI's own failures, told to the site (`POST /api/reportClientError`, core/site/api.ts
// ClientErrorReport): an error boundary's catch and the page's uncaught errors and rejections.
// The site logs each under an id, which the boundary shows, so the person at a kiosk can tell IT
// which line of logs/site.log it is. The console keeps its line too. In the Electron app the
// report goes over the window's IPC bridge, and electron/ipc.ts writes it to the log.

import type { ClientErrorReport } from '../../core/site/api.ts';

/** Kept in step with core/site/api.ts CLIENT_ERROR_MESSAGE_MAX / CLIENT_ERROR_STACK_MAX (the site refuses longer). */
export const REPORT_MESSAGE_MAX = 500;
export const REPORT_STACK_MAX = 4000;
/** Distinct errors this page sends at most (a render loop sends one; the site bounds the rate too). */
const REPORTS_PER_PAGE_MAX = 20;

export type ReportSink = (report: ClientErrorReport) => Promise<{ id: string | null }>;

export interface Reporter {
  /**
   * Sends what failed once per distinct error (kind, message, screen); the same error again gets
   * the first one's answer. Resolves the site's id, or null (not sent, refused, over the rate).
   */
  report(kind: ClientErrorReport['kind'], error: unknown, where: { screen?: string; lang?: string; stack?: string }): Promise<string | null>;
}

/** The error's message, never empty (a thrown string, null, an object without message). */
function messageOf(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  try {
    return typeof error === 'string' ? error : String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}

/** A reporter that sends through `sink`; `version`: the UI's, when known. */
export function createReporter(sink: ReportSink, version?: string): Reporter {
  const sent = new Map<string, Promise<string | null>>();
  return {
    report(kind, error, where) {
      const message = messageOf(error).slice(0, REPORT_MESSAGE_MAX);
      const key = `${kind}\n${where.screen ?? ''}\n${message}`;
      const earlier = sent.get(key);
      if (earlier) return earlier;
      if (sent.size >= REPORTS_PER_PAGE_MAX) return Promise.resolve(null);
      const stack = where.stack ?? (error instanceof Error ? error.stack : undefined);
      const report: ClientErrorReport = {
        kind,
        message,
        ...(stack ? { stack: stack.slice(0, REPORT_STACK_MAX) } : {}),
        ...(where.screen ? { screen: where.screen.slice(0, 64) } : {}),
        ...(where.lang ? { lang: where.lang.slice(0, 16) } : {}),
        ...(version ? { version: version.slice(0, 64) } : {}),
      };
      const id = sink(report).then(
        (r) => (typeof r?.id === 'string' ? r.id : null),
        () => null,
      );
      sent.set(key, id);
      return id;
    },
  };
}

let current: Reporter | undefined;

/** The page's reporter (main.tsx sets it; tests and server-side markup have none: nothing is sent). */
export function setReporter(r: Reporter | undefined): void {
  current = r;
}

export function reporter(): Reporter | undefined {
  return current;
}

/**
 * Reports the page's uncaught errors and rejections (an event handler's, a timer's, a promise
 * nobody awaited) — what no error boundary sees. `where`: the screen and language at that moment.
 */
export function reportUncaught(target: Window, r: Reporter, where: () => { screen?: string; lang?: string }): () => void {
  const onError = (e: ErrorEvent) => void r.report('error', e.error ?? e.message, where());
  const onRejection = (e: PromiseRejectionEvent) => void r.report('rejection', e.reason, where());
  target.addEventListener('error', onError);
  target.addEventListener('unhandledrejection', onRejection);
  return () => {
    target.removeEventListener('error', onError);
    target.removeEventListener('unhandledrejection', onRejection);
  };
}

/** The screen a person sees, for a report: the first-run and sign-in screens before the store's `screen`. */
export function shownScreen(s: { firstRun: { initialized: boolean } | null; user: unknown; screen: string }): string {
  if (s.firstRun && !s.firstRun.initialized) return 'firstRun';
  return s.user ? s.screen : 'signIn';
}
