// The errors of core/sync: a closed set of kinds, so callers (the engine's retry policy, the CLI's
// exit codes) decide by kind and never by message text.
//   InvalidArgument  a bad key, URL or option — never retried
//   Forbidden        a key outside the site's prefix — never retried
//   NotFound         an object or local file that is not there
//   Verification     an uploaded object whose size or SHA-256 differs from what was sent
//   Transport        network or I/O failure — retried with backoff
//   AccessDenied     HQ answered but refused this site's credentials (HTTP 403/401: a key wrong,
//                    expired or revoked, a policy that does not allow the request) — retried with
//                    backoff, but reported at once: waiting for the line mends nothing
//   Conflict         HQ's sender marker names another data directory (sender.ts) — nothing is
//                    sent until a round finds the prefix this sender's again (a take-over)

export type SyncErrorKind = 'InvalidArgument' | 'Forbidden' | 'NotFound' | 'Verification' | 'Transport' | 'AccessDenied' | 'Conflict';

export class SyncError extends Error {
  readonly kind: SyncErrorKind;
  constructor(kind: SyncErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SyncError';
    this.kind = kind;
  }
}

export const isSyncError = (e: unknown, kind?: SyncErrorKind): e is SyncError => e instanceof SyncError && (kind === undefined || e.kind === kind);
