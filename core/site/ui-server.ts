// The headless mode's UI endpoints: the built renderer as static files, the site API as
// `POST /api/<method>`, and pushed events over a WebSocket at `/api/events` — the same typed API
// the Electron preload exposes, so the same renderer runs in both.
//
// Security (a browser on the site network is not the trusted floor PC):
//   - every API call but the public ones (api.ts PUBLIC_METHODS: firstRun, initSite, signIn, me; and
//     reportClientError, answered here and rate-bounded, internal-error.ts ClientErrorLog) needs a session: a random 256-bit token in an HttpOnly,
//     SameSite=Strict cookie (Secure and named `__Host-tilstand_session` when served over TLS),
//     idle-expired (the cookie given again at each call, so it too lives from the last use), new at
//     every sign-in, at most SESSIONS_PER_USER_MAX per user (the oldest ends);
//     of several cookies of the name only one that names a held session counts, two such are none
//     (`sessionOf`);
//   - a session's source (api.ts SessionContext.source, what unknown badges are counted against)
//     is the client's address as the socket has it (`clientSource`), never a header;
//   - sign-ins are checked one at a time (each costs a scrypt hash, a name that is no user too),
//     sources taking turns, at most 4 waiting per source and 64 in all (429 beyond: `SignInGate`);
//   - cross-site requests are refused: POST only, JSON only, a custom `X-Tilstand` header that a
//     cross-site form or fetch cannot send without a preflight this server never answers, and an
//     `Origin` that must match the Host;
//   - WebSocket upgrades need the session cookie and a matching Origin, and a user has at most
//     16 event sockets open; every socket is pinged (EVENTS_PING_MS) and one that does not
//     answer is ended, so a page gone without a word stops counting;
//   - static responses carry the CSP, nosniff, frame denial and no referrer; paths cannot escape
//     the renderer folder; request bodies are capped (413), and so are the events an event
//     socket's page leaves unread (1 MiB, then the socket ends).

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { join, normalize, resolve, sep } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { ApiValidationError, validateCall, validateClientErrorReport, validateInputAge } from './api-validate.ts';
import { rendererContentType } from './renderer-files.ts';
import { CLIENT_ERROR_METHOD, INPUT_AGE_HEADER, PUBLIC_METHODS as API_PUBLIC_METHODS, SiteApiError, type ApiResult, type SessionContext, type SessionUser, type SiteBackend, type SiteEvent } from './api.ts';
import { callIn, ClientErrorLog, logToStderr, reportInternalError } from './internal-error.ts';

/** The session cookie's name over plain HTTP (loopback only, config.ts): `__Host-` needs Secure. */
export const SESSION_COOKIE = 'tilstand_session';
/**
 * Its name over TLS. The `__Host-` prefix makes the browser refuse the cookie unless it is Secure,
 * Path=/ and without Domain, so a sibling host (or a page over plain HTTP) cannot plant one the
 * site would read.
 */
export const SESSION_COOKIE_TLS = `__Host-${SESSION_COOKIE}`;
/** Close code of an event socket whose session ended (signed out, idle, or its user disabled). */
export const SESSION_ENDED_CODE = 4401;
const BODY_BYTES_MAX = 64 * 1024;
/**
 * Events waiting to go out on one event socket: beyond this its page has read nothing for a long
 * while (stalled, or its network gone without a word), and the socket ends rather than hold every
 * later push in memory. A page that reads takes a status push (a few KiB) every 5 s.
 */
const EVENTS_BUFFERED_BYTES_MAX = 1024 * 1024;
/**
 * Event sockets one user may have open (all their sessions together): each may hold up to
 * EVENTS_BUFFERED_BYTES_MAX of pushes its page leaves unread, so without a bound one account — a
 * viewer's will do — could open thousands that never read and grow the site's memory without end.
 * Beyond it the upgrade is refused (429); the page tries again every 2 s, and gets in once one of
 * the user's sockets has ended (a page gone without a word: at the latest when it misses a ping,
 * EVENTS_PING_MS).
 */
const EVENT_SOCKETS_PER_USER_MAX = 16;
/**
 * How often every event socket is pinged (a WebSocket ping frame, which the browser answers on its
 * own, whatever the page's script is doing); one that has not answered by the next round is ended.
 * A socket whose page is gone without a word (half-open after a network blip, a laptop's sleep:
 * the page's watchdog opened another, renderer/src/api/client.ts) sent and heard nothing, and
 * counted toward EVENT_SOCKETS_PER_USER_MAX until TCP gave up on it — hours, when nothing was
 * pushed —, so after enough blips a user's page could not open its events socket at all. Now
 * such a socket stops counting within two rounds (15–30 s), about when the page's watchdog
 * (three status intervals, at least 15 s) has replaced it.
 */
const EVENTS_PING_MS = 15_000;
/**
 * Sessions one user may hold (signed in; the newest sign-ins kept). Every sign-in makes a session,
 * held until it goes unused for its idle life (12 h), so a script signing in over and over grew the
 * site's memory without bound. Beyond it the user's oldest session ends: its next call is refused as
 * one without a sign-in, and its event sockets close at the next push. As many as the event sockets
 * a user may have open: a screen beyond those gets no pushes anyway.
 */
export const SESSIONS_PER_USER_MAX = EVENT_SOCKETS_PER_USER_MAX;
const PUBLIC_METHODS = new Set<string>(API_PUBLIC_METHODS);
/**
 * Sign-ins checked at once. Each costs a scrypt hash (about 0.1–0.3 s of a core and 32 MiB), and
 * a name that is no user costs one too (core/inbox users.ts `verifyNobody`), five per name before
 * its lockout: a client without credentials that sent sign-ins side by side under ever new names
 * kept every threadpool thread hashing (four, on a site PC of two cores) for as long as it liked.
 */
const SIGN_INS_AT_ONCE = 1;
/** Sign-ins one source (`clientSource`) may have waiting for their turn; the next is refused (429). */
const SIGN_INS_WAITING_PER_SOURCE = 4;
/** Sign-ins waiting from all sources together; the next is refused (429). */
const SIGN_INS_WAITING_MAX = 64;

export const UI_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

const SECURITY_HEADERS = {
  'Content-Security-Policy': UI_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

export interface UiServerOptions {
  rendererDir: string;
  /** True when the server is reached over TLS: cookies get `Secure`. */
  secure: boolean;
  sessionIdleMs?: number;
  now?: () => number;
  /**
   * Where a failure that is no SiteApiError is written, whole, under the error id its client is
   * told (the site's log, logs/site.log); stderr when absent (the first-run screen has no site
   * log yet).
   */
  log?: (line: string) => void;
  /** Event sockets' ping round (EVENTS_PING_MS unless given; tests give less). */
  eventsPingMs?: number;
}

interface Session extends SessionContext {
  readonly token: string;
  lastSeenMs: number;
}

export class UiServer {
  private readonly sessions = new Map<string, Session>();
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  /** Open event sockets and the session each was opened under. */
  private readonly sockets = new Map<WebSocket, Session>();
  /** Sockets pinged in the last round that have not answered yet. */
  private readonly unanswered = new Set<WebSocket>();
  /** The ping round's timer, running while any event socket is open. */
  private pinger: NodeJS.Timeout | undefined;
  private lastRoundMs = 0;
  private readonly unsubscribe: () => void;
  private readonly idleMs: number;
  private readonly now: () => number;
  private readonly signIns = new SignInGate(SIGN_INS_AT_ONCE, SIGN_INS_WAITING_PER_SOURCE, SIGN_INS_WAITING_MAX);
  private readonly cookieName: string;
  /** The floor UI's reports of its own failures (`POST /api/reportClientError`), rate-bounded. */
  private readonly clientErrors: ClientErrorLog;

  constructor(
    private readonly backend: SiteBackend,
    private readonly o: UiServerOptions,
  ) {
    this.idleMs = o.sessionIdleMs ?? 12 * 3_600_000;
    this.now = o.now ?? Date.now;
    this.cookieName = o.secure ? SESSION_COOKIE_TLS : SESSION_COOKIE;
    this.unsubscribe = backend.subscribe((e) => this.broadcast(e));
    this.clientErrors = new ClientErrorLog(o.log ?? logToStderr, this.now);
  }

  /** Handles the request if it is the UI's; returns false to let the caller answer it. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path.startsWith('/api/')) {
      answered(res, this.api(req, res, path.slice('/api/'.length)), this.o.log ?? logToStderr, `${req.method} ${path}`);
      return true;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (path === '/' || path === '/index.html' || path.startsWith('/assets/') || path === '/favicon.ico') {
        answered(res, this.serveStatic(res, path === '/' ? '/index.html' : path), this.o.log ?? logToStderr, `${req.method} ${path}`);
        return true;
      }
    }
    return false;
  }

  /** WebSocket upgrade for `/api/events`; returns false when it is not ours. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if ((req.url ?? '').split('?')[0] !== '/api/events') return false;
    const session = this.sessionOf(req);
    if (!session?.user || !sameOrigin(req, true)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      return true;
    }
    let open = 0;
    for (const s of this.sockets.values()) if (s.user?.name === session.user.name) open++;
    if (open >= EVENT_SOCKETS_PER_USER_MAX) {
      socket.end(`HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${session.user.name} has ${open} event sockets open already\n`);
      return true;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.set(ws, session);
      ws.on('close', () => this.forget(ws));
      ws.on('pong', () => this.unanswered.delete(ws));
      this.startPinging();
      ws.on('message', () => ws.close(1008, 'this socket only sends'));
      // A frame over maxPayload or malformed: ws closes the socket and emits 'error', which,
      // unheard, would end the site's process.
      ws.on('error', () => ws.terminate());
    });
    return true;
  }

  /** Sessions held (signed in, or a sign-in under way); for tests and diagnostics. */
  sessionCount(): number {
    return this.sessions.size;
  }

  close(): void {
    this.clientErrors.flush(true);
    this.unsubscribe();
    for (const ws of this.sockets.keys()) ws.terminate();
    this.stopPinging();
    this.wss.close();
  }

  /** A socket gone (closed, or ended here): it no longer counts toward its user's cap. */
  private forget(ws: WebSocket): void {
    this.sockets.delete(ws);
    this.unanswered.delete(ws);
    if (this.sockets.size === 0) this.stopPinging();
  }

  private startPinging(): void {
    if (this.pinger) return;
    const every = this.o.eventsPingMs ?? EVENTS_PING_MS;
    this.lastRoundMs = performance.now();
    this.pinger = setInterval(() => this.pingRound(every), every);
    this.pinger.unref();
  }

  private stopPinging(): void {
    clearInterval(this.pinger);
    this.pinger = undefined;
    this.unanswered.clear();
  }

  /**
   * One ping round: a socket that has not answered the last round's ping is ended (its page is
   * gone), the others are pinged again. One ping per socket per round, one timer for them all. A
   * round that comes late (this process's event loop held up longer than a round) judges nobody —
   * the answers may be waiting unread behind the timer — and only pings. A socket is judged only
   * after the loop has read what came meanwhile (`setImmediate`: after this turn's reads): a loop
   * held less than a round late (an I/O callback's compaction right after the ping) runs the due
   * timer before it reads the sockets, and the answers that came during the hold were still unread
   * — every page's socket was ended at once.
   */
  private pingRound(every: number): void {
    const now = performance.now();
    const late = now - this.lastRoundMs > 1.5 * every;
    this.lastRoundMs = now;
    const judged: WebSocket[] = [];
    for (const ws of [...this.sockets.keys()]) {
      if (ws.readyState !== ws.OPEN) continue; // closing: ws ends it after its close timeout
      if (!late && this.unanswered.has(ws)) {
        judged.push(ws);
        continue;
      }
      this.unanswered.add(ws);
      ws.ping();
    }
    if (judged.length === 0) return;
    setImmediate(() => {
      for (const ws of judged) {
        if (!this.sockets.has(ws) || ws.readyState !== ws.OPEN) continue;
        if (this.unanswered.has(ws)) {
          ws.terminate();
          this.forget(ws);
        } else {
          // It had answered: pinged with this round after all.
          this.unanswered.add(ws);
          ws.ping();
        }
      }
    });
  }

  private broadcast(e: SiteEvent): void {
    const text = JSON.stringify(e);
    for (const [ws, session] of this.sockets) {
      if (ws.readyState !== ws.OPEN) continue;
      // A socket outlives neither its session (signed out, idle too long) nor its user's right
      // to sign in (disabled, locked or removed since): it is closed instead of sent to.
      if (!this.live(session)) ws.close(SESSION_ENDED_CODE, 'signed out');
      else if (ws.bufferedAmount > EVENTS_BUFFERED_BYTES_MAX) ws.terminate(); // the page reconnects if it lives
      else ws.send(text);
    }
  }

  private live(s: Session): boolean {
    if (this.sessions.get(s.token) !== s || this.expired(s, this.now())) return false;
    return this.backend.signedIn ? this.backend.signedIn(s) : s.user !== null;
  }

  /** Idle longer than a session lives: dropped (true), or still held (false). */
  private expired(s: Session, now: number): boolean {
    if (now - s.lastSeenMs <= this.idleMs) return false;
    this.sessions.delete(s.token);
    return true;
  }

  /** Drops a session kept only to say why it was signed out, once that is said. */
  private forgetSignedOut(s: Session | undefined): void {
    if (s && s.user === null && s.signedOutIdle === undefined) this.sessions.delete(s.token);
  }

  /**
   * The session the request's cookie names. A browser sends every cookie of the name it holds (one
   * planted by another port of the same host, or with a longer Path, comes first), so each value is
   * looked up: the one that names a session held here is taken; when several do, none is (the
   * server cannot tell the planted one; the page asks for a sign-in, which ends them all).
   */
  private sessionOf(req: IncomingMessage): Session | undefined {
    const now = this.now();
    let found: Session | undefined;
    for (const token of cookieValues(req.headers.cookie, this.cookieName)) {
      const s = this.sessions.get(token);
      if (!s || s === found || this.expired(s, now)) continue;
      if (found) return undefined;
      found = s;
    }
    if (found) found.lastSeenMs = now;
    return found;
  }

  /** Ends every session the request's cookies name (at a sign-in: a planted one does not outlive it). */
  private endNamedSessions(req: IncomingMessage, keep: Session): void {
    for (const token of cookieValues(req.headers.cookie, this.cookieName)) {
      if (token !== keep.token) this.sessions.delete(token);
    }
  }

  /** Ends `user`'s oldest sessions beyond SESSIONS_PER_USER_MAX (the map holds them in the order they were made). */
  private capSessions(user: string): void {
    const theirs = [...this.sessions.values()].filter((s) => s.user?.name === user);
    for (const s of theirs.slice(0, -SESSIONS_PER_USER_MAX)) this.sessions.delete(s.token);
  }

  private newSession(req: IncomingMessage, res: ServerResponse): Session {
    // Sessions nobody came back to are dropped here (a session is otherwise checked only when
    // its cookie is presented), so failed or abandoned sign-ins do not pile up.
    const now = this.now();
    for (const old of [...this.sessions.values()]) this.expired(old, now);
    const token = randomBytes(32).toString('base64url');
    let user: SessionUser | null = null;
    const s: Session = {
      token,
      source: clientSource(req.socket.remoteAddress),
      lastSeenMs: now,
      get user() {
        return user;
      },
      setUser: (u) => {
        user = u;
        // Signed out: the token names nobody from now on. One the backend signed out for want of
        // use is kept until a call has said so (SessionContext.signedOutIdle).
        if (u === null && s.signedOutIdle === undefined) this.sessions.delete(token);
      },
    };
    this.sessions.set(token, s);
    this.setCookie(res, token);
    return s;
  }

  /**
   * Gives the browser the session's cookie, to live as long as the session does without use (its
   * Max-Age the idle life): at the sign-in, and again at each call the session makes, so the
   * browser's copy, like the session, lives from the last use. Given once, it ended 12 h after the
   * sign-in whatever the screen did since (one in use with `ui.idleSignOutMs` 0 was signed out).
   */
  private setCookie(res: ServerResponse, token: string): void {
    const attrs = ['Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.floor(this.idleMs / 1000)}`];
    if (this.o.secure) attrs.push('Secure');
    // No Domain, Path=/ and (over TLS) Secure: what the `__Host-` name requires.
    res.setHeader('Set-Cookie', `${this.cookieName}=${token}; ${attrs.join('; ')}`);
  }

  private async api(req: IncomingMessage, res: ServerResponse, method: string): Promise<void> {
    const reply = (status: number, body: ApiResult<unknown>) => {
      // Serialized before the head is written: a value JSON cannot carry (a bigint) then fails
      // into the 500 below instead of after the 200's head went out.
      const text = JSON.stringify(body);
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...SECURITY_HEADERS });
      res.end(text);
    };
    // The refusals of a request as a whole carry codes as the API's own do (api.ts `request.*`), so
    // the floor UI words them; only the one over the size limit can come from the floor UI itself.
    if (req.method !== 'POST') return reply(405, { ok: false, error: { kind: 'invalid', message: 'POST only', code: 'request.refused' } });
    if (req.headers['x-tilstand'] !== '1' || !sameOrigin(req, false) || !String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      return reply(403, { ok: false, error: { kind: 'forbidden', message: 'cross-site request refused', code: 'request.refused' } });
    }
    let body: unknown;
    try {
      body = JSON.parse((await readBody(req, BODY_BYTES_MAX)) || '{}');
    } catch (e) {
      if (e instanceof BodyTooLarge) {
        // The rest of the body is not read: the connection ends once this answer is out (Node
        // closes it after a response that says so), not before (a reset instead of an answer).
        res.setHeader('Connection', 'close');
        return reply(413, { ok: false, error: { kind: 'invalid', message: e.message, code: 'request.tooLarge', params: { max: BODY_BYTES_MAX } } });
      }
      return reply(400, { ok: false, error: { kind: 'invalid', message: (e as Error).message, code: 'request.refused' } });
    }
    let session = this.sessionOf(req);
    // Public (a sign-in or first-run screen fails too), after the same origin, header and body
    // checks as any call; answered here, where the session and the log are (api.ts ClientErrorReport).
    if (method === CLIENT_ERROR_METHOD) {
      let report;
      try {
        report = validateClientErrorReport(body);
      } catch (e) {
        return reply(400, { ok: false, error: { kind: 'invalid', message: (e as Error).message } });
      }
      const user = session?.user?.name ?? null;
      const id = this.clientErrors.report({ user, ...(session && user !== null ? { session: session.token } : {}), source: clientSource(req.socket.remoteAddress) }, report);
      return reply(200, { ok: true, value: { id } });
    }
    if (session?.user) this.setCookie(res, session.token);
    let created: Session | undefined;
    let signInTurn = false;
    // A session kept only to say why it was signed out goes on to the backend, which says so.
    if (!PUBLIC_METHODS.has(method) && !session?.user && !session?.signedOutIdle) {
      return reply(401, { ok: false, error: { kind: 'unauthenticated', message: 'sign in first', code: 'session.required' } });
    }
    try {
      const call = validateCall(method, body);
      const input = validateInputAge(req.headers[INPUT_AGE_HEADER]);
      if (method === 'signIn') {
        // One sign-in hashes at a time, the sources waiting taking turns (SIGN_INS_AT_ONCE).
        const source = clientSource(req.socket.remoteAddress);
        if (!(await this.signIns.enter(source))) {
          return reply(429, { ok: false, error: { kind: 'unauthenticated', message: 'sign-in refused: too many sign-ins from here at once; try again in a moment', code: 'signin.busy' } });
        }
        signInTurn = true;
      }
      // Every sign-in gets a session and token of its own (session fixation): a token known before
      // it (planted in the browser, or the last person's at this PC) never comes to name the one
      // signing in now.
      if (method === 'signIn') created = this.newSession(req, res);
      // Public calls without a session (me, firstRun, initSite) get a context that remembers nothing.
      const context: SessionContext = created ?? session ?? { user: null, setUser: () => undefined };
      const value = method === 'me' && !session ? null : await this.backend.call(call.method, call.req as never, context, input);
      // Signed in: the sessions the request came with are over (their event sockets close at the
      // next push), also one planted beside the browser's own that made the request ambiguous.
      if (created?.user) {
        this.endNamedSessions(req, created);
        this.capSessions(created.user.name);
      }
      reply(200, { ok: true, value: value ?? null });
    } catch (e) {
      // A sign-in that failed keeps no session of its own, and sends no cookie: one the browser
      // holds goes on naming what it named.
      if (created && !created.user) {
        this.sessions.delete(created.token);
        res.removeHeader('Set-Cookie');
      }
      // The refusal's code and field travel with the message: the floor UI words it (api.ts `input.*`).
      if (e instanceof ApiValidationError) return reply(400, { ok: false, error: e.body() });
      if (e instanceof SiteApiError) {
        const status = { unauthenticated: 401, forbidden: 403, invalid: 400, not_found: 404, conflict: 409, internal: 500 }[e.kind];
        return reply(status, { ok: false, error: e.body() });
      }
      // Nobody foresaw it (a backend other than the SiteService, which answers such failures
      // itself: the first-run screen's initSite failing on EACCES, say; or an answer JSON cannot
      // carry). Its text may name a path of the data directory and the client may not be signed
      // in: the client gets an id, the log the whole error under it (internal-error.ts).
      const message = reportInternalError(this.o.log ?? logToStderr, callIn(method, session?.user ?? created?.user), e);
      reply(500, { ok: false, error: { kind: 'internal', message } });
    } finally {
      if (signInTurn) this.signIns.leave();
      this.forgetSignedOut(session);
    }
  }

  private async serveStatic(res: ServerResponse, path: string): Promise<void> {
    const root = resolve(this.o.rendererDir);
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      // A malformed escape (`%E0%A4%A`): any page the floor PC's browser opens can ask for one.
      res.writeHead(400, { 'Content-Type': 'text/plain', ...SECURITY_HEADERS }).end('bad path\n');
      return;
    }
    const file = normalize(join(root, decoded));
    if (!file.startsWith(root + sep)) {
      // The same answer, headers and all, as a file that is not there.
      res.writeHead(404, { 'Content-Type': 'text/plain', ...SECURITY_HEADERS }).end('not found\n');
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': rendererContentType(file), ...SECURITY_HEADERS });
      res.end(body);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain', ...SECURITY_HEADERS });
      res.end(path === '/index.html' ? 'the renderer is not built: run `npm run build`\n' : 'not found\n');
    }
  }
}

/**
 * Ends a handler's promise. A failure nobody caught answers 500 (or, once a head went out, cuts
 * the response off) and goes no further: an unhandled rejection ends a Node 20 process, here the
 * whole site, and any web page the floor PC's browser opens can send the request. Like every
 * other internal error it is logged whole under an id and the client gets only the id
 * (internal-error.ts); `where` is the request's method and path. Exported for its tests.
 */
export function answered(res: ServerResponse, handler: Promise<void>, log: (line: string) => void, where: string): void {
  handler.catch((e: unknown) => {
    try {
      if (res.headersSent) {
        res.destroy();
        // Nobody is told this id (the response is cut off), but the error is not lost.
        reportInternalError(log, `${where} (response cut off)`, e);
        return;
      }
      const body: ApiResult<unknown> = { ok: false, error: { kind: 'internal', message: reportInternalError(log, where, e) } };
      res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8', ...SECURITY_HEADERS }).end(JSON.stringify(body));
    } catch {
      res.destroy();
    }
  });
}

/**
 * The source unknown badges are counted against (api.ts SessionContext.source) for a client
 * address: the address, an IPv4 one without its IPv6 form (`::ffff:`), and every loopback address
 * as one, `loopback`. Loopback clients are the site PC's own screens (its browser, a kiosk): they
 * share a count, as a badge reader's screens would, so five unknown badges at the PC pause badges
 * there (names and PINs go on), and a process on the PC cannot pick fresh 127.x addresses for
 * fresh counts. A client on the site network has its own. Not a header (X-Forwarded-For): the
 * client writes those, and would name a new source per try.
 */
export function clientSource(address: string | undefined): string {
  if (!address) return 'unknown';
  const a = address.toLowerCase().startsWith('::ffff:') && address.includes('.') ? address.slice('::ffff:'.length) : address;
  return a === '::1' || a.startsWith('127.') ? 'loopback' : a;
}

/** The Origin (or, for browsers that omit it on same-origin POSTs, nothing) must match Host. */
function sameOrigin(req: IncomingMessage, required: boolean): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return !required;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** Every value the Cookie header gives `name`, in the header's order (a name may come more than once). */
function cookieValues(header: string | undefined, name: string): string[] {
  const out: string[] = [];
  if (!header) return out;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      const value = part.slice(i + 1).trim();
      if (value) out.push(value);
    }
  }
  return out;
}

class BodyTooLarge extends Error {}

/**
 * At most `atOnce` callers between `enter` and `leave`; the others wait, the sources taking turns
 * (a source with many waiting goes to the back after each of its turns), so one client's pile of
 * sign-ins delays another's by a turn, not by the pile.
 */
export class SignInGate {
  private running = 0;
  private waitingCount = 0;
  /** Per source, its waiting callers in order; the Map's order is the order of turns. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(
    private readonly atOnce: number,
    private readonly perSource: number,
    private readonly max: number,
  ) {}

  /** Resolves true when the caller's turn has come (it must `leave` then); false at once when too many wait. */
  enter(source: string): Promise<boolean> {
    if (this.running < this.atOnce && this.waitingCount === 0) {
      this.running++;
      return Promise.resolve(true);
    }
    const queue = this.waiting.get(source) ?? [];
    if (queue.length >= this.perSource || this.waitingCount >= this.max) return Promise.resolve(false);
    if (queue.length === 0) this.waiting.set(source, queue);
    this.waitingCount++;
    return new Promise<boolean>((resolve) => queue.push(() => resolve(true)));
  }

  leave(): void {
    this.running--;
    const next = this.waiting.entries().next();
    if (next.done) return;
    const [source, queue] = next.value;
    const turn = queue.shift()!;
    // To the back of the turns, or gone when nothing of it waits.
    this.waiting.delete(source);
    if (queue.length > 0) this.waiting.set(source, queue);
    this.waitingCount--;
    this.running++;
    turn();
  }
}

function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    const onData = (c: Buffer) => {
      n += c.length;
      if (n > max) {
        // Stop reading, but leave the socket alone: the response goes out on it (413).
        req.off('data', onData);
        req.pause();
        chunks.length = 0;
        reject(new BodyTooLarge(`request body over ${max} bytes`));
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
