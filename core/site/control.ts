// The control socket: `<data>/control.sock`, a unix socket (mode 0600, and closed to other users
// from the moment it exists: `ControlServer.listen`) through which the CLI talks to a running
// site. One JSON object per line each way:
//
//   request   {"id": 1, "op": "status"}                         (id: any JSON value, echoed)
//   response  {"id": 1, "ok": true, "value": …}
//           | {"id": 1, "ok": false, "error": {"kind": "…", "message": "…"}}
//
// A request may ask for heartbeats: {"id": 1, "op": "…", "heartbeatMs": 1000} (an integer from
// HEARTBEAT_MS_MIN to HEARTBEAT_MS_MAX). While its handler runs, the site then writes
// {"id": 1, "working": true, "elapsedMs": …} every heartbeatMs, before the response, with
// "progress": {…} once the handler has reported how far it has come (`ControlWork.progress`: a
// dead-letter replay's counts, once per slice). A client that
// asks waits for the answer as long as heartbeats come, and gives up only after a silence: a
// replay of a whole flood outlasted any fixed deadline and the CLI reported a failure while the
// site went on and finished it. Heartbeats are timers, so they also stop when the site's event
// loop does; a site that is gone closes the connection. Without the field nothing changes (an
// older CLI reads the first line as the answer).
//
// Ops are whatever handlers the site registers (site.ts: status, deadletters.list,
// deadletters.replay, contracts.list, contracts.add, agent.run, sync.now, prune, stop, and the
// inbox's). Requests on one connection are answered in order. Limits: a request line of at most
// `requestBytesMax`; at most `connectionsMax` connections at once (more are closed at once); an
// idle connection is closed after `idleMs` (the clock stops while one of its requests is being
// answered).
//
// Stale socket: a socket file left by a crashed site answers connect with ECONNREFUSED; it is
// removed and the listener takes its place. A socket that accepts a connection belongs to a
// running site: listening fails with kind 'AlreadyRunning'.

import { chmodSync, existsSync, lstatSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** What a handler may tell a client waiting on heartbeats while it works. */
export interface ControlWork {
  /** How far the work has come (plain JSON), sent with the heartbeats from then on; the last one counts. */
  progress(p: Record<string, unknown>): void;
  /**
   * From here on the site's stop need not wait for this handler (`ControlServer.quiesce`): work in
   * slices whose every commit stands, whose client is told that the outcome is unknown when the
   * site goes away (a dead-letter replay or dismissal of a flood, `sync.now`).
   */
  interruptible(): void;
}

export type ControlHandler = (args: Record<string, unknown>, work: ControlWork) => unknown | Promise<unknown>;

/** 'Disconnected': the site closed the connection before it answered (stopped, crashed). */
export type ControlErrorKind = 'AlreadyRunning' | 'NotRunning' | 'NotConfigured' | 'UnknownOp' | 'InvalidArgument' | 'Corruption' | 'Failed' | 'Timeout' | 'Disconnected';

export class ControlError extends Error {
  readonly kind: ControlErrorKind;
  constructor(kind: ControlErrorKind, message: string) {
    super(message);
    this.name = `ControlError(${kind})`;
    this.kind = kind;
  }
}

export interface ControlServerOptions {
  requestBytesMax?: number;
  connectionsMax?: number;
  idleMs?: number;
}

/** The heartbeat periods a request may ask for (`heartbeatMs`). */
export const HEARTBEAT_MS_MIN = 100;
export const HEARTBEAT_MS_MAX = 60_000;

/**
 * Error kinds a handler may throw through (an Error with `kind` keeps it; others are 'Failed').
 * Whatever was thrown: null or a string read as an Error threw here, and the request went unanswered.
 */
function errorOf(e: unknown): { kind: string; message: string } {
  const kind = e !== null && typeof e === 'object' ? (e as { kind?: unknown }).kind : undefined;
  return { kind: typeof kind === 'string' ? kind : 'Failed', message: e instanceof Error ? e.message : String(e) };
}

/** The op a request line names (it parsed once already, to be answered). */
const opOf = (line: string): string => String((JSON.parse(line) as { op?: unknown }).op);

/** An answer as its line; bigints as their digits. Throws what JSON.stringify throws (a cycle). */
const answerLine = (answer: Record<string, unknown>): string => `${JSON.stringify(answer, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}\n`;

/** True when a site answers on the socket. */
export function socketAnswers(path: string, timeoutMs = 1000): Promise<boolean> {
  // Node would connect to the path cut short: another socket's, if any.
  if (socketPathProblem(path) !== undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    const s = connect(path);
    const done = (v: boolean) => {
      clearTimeout(t);
      s.destroy();
      resolve(v);
    };
    const t = setTimeout(() => done(false), timeoutMs);
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/**
 * The longest path a unix socket is bound to or reached at (Linux's sun_path, 108 bytes with its
 * NUL). Node cuts a longer one short without a word: the site listened at the shortened path,
 * its chmod of the whole path then failed, and the server it had opened went on answering there
 * (`stop` included), where another folder's socket could be.
 */
export const SOCKET_PATH_BYTES_MAX = 107;

/** Why `path` cannot be a control socket's (too long), or undefined. */
export function socketPathProblem(path: string): string | undefined {
  const n = Buffer.byteLength(path);
  return n <= SOCKET_PATH_BYTES_MAX ? undefined : `its path is ${n} bytes, longer than the ${SOCKET_PATH_BYTES_MAX} a unix socket takes (a data directory with a shorter path has one)`;
}

export class ControlServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly o: Required<ControlServerOptions>;
  /** The handlers running (`answer`), which `quiesce` waits for. */
  private readonly handling = new Set<Promise<unknown>>();
  private quiescing = false;
  /** Wakes `quiesce` when a handler becomes interruptible. */
  private handlingChanged: (() => void) | undefined;

  private constructor(
    readonly path: string,
    private readonly handlers: ReadonlyMap<string, ControlHandler>,
    o: ControlServerOptions,
  ) {
    this.o = { requestBytesMax: 1024 * 1024, connectionsMax: 16, idleMs: 60_000, ...o };
    this.server = createServer((s) => this.onConnection(s));
  }

  static async listen(path: string, handlers: ReadonlyMap<string, ControlHandler>, o: ControlServerOptions = {}): Promise<ControlServer> {
    const tooLong = socketPathProblem(path);
    if (tooLong !== undefined) throw new ControlError('Failed', `${path}: ${tooLong}`);
    if (existsSync(path)) {
      if (await socketAnswers(path)) throw new ControlError('AlreadyRunning', `a site is already running here (${path} answers)`);
      // Left by a site that did not stop cleanly; anything else there is not the site's to delete.
      if (!lstatSync(path).isSocket()) throw new ControlError('Failed', `${path} is there and is no socket; move it away`);
      unlinkSync(path);
    }
    const cs = new ControlServer(path, handlers, o);
    await new Promise<void>((resolve, reject) => {
      cs.server.once('error', reject);
      // The socket file is made by bind(2) with 0777 less the umask, and Node binds a pipe
      // synchronously inside listen() (net.js setupListenHandle; a failure is emitted later as
      // 'error'). So a umask that takes group and other away for this one call makes the file
      // 0700 from its first moment: with the chmod alone, any local user could connect between
      // the bind and the chmod. The umask is the process's, and the libuv thread pool may create
      // a file or folder meanwhile: 077 (not 177) leaves the owner's rights to whatever that is.
      const umask = process.umask(0o077);
      try {
        cs.server.listen(path, () => {
          cs.server.off('error', reject);
          resolve();
        });
      } finally {
        process.umask(umask);
      }
    });
    // Second guard, and the mode the protocol names (the umask left an x bit sockets do not use).
    try {
      chmodSync(path, 0o600);
    } catch (e) {
      // Not left listening: a server the caller never got would answer for good.
      await cs.close();
      throw e;
    }
    return cs;
  }

  /**
   * From now on every request is refused ('Failed', "the site is stopping"); resolves once the
   * handlers in flight have finished — their answers go out before `close` — or after `waitMs`,
   * with how many were still running. A handler that said it is interruptible
   * (`ControlWork.interruptible`) is not waited for. `Site.stop` calls it first, so an op that hashes a PIN
   * (`deadletters.dismiss`, `inbox.decide`) or commits across an await is not cut off by the
   * closing of site.db and the tables (and its connection destroyed unanswered).
   */
  async quiesce(waitMs: number): Promise<number> {
    this.quiescing = true;
    if (this.handling.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      let over = false;
      const bound = new Promise<void>((r) => (timer = setTimeout(() => ((over = true), r()), waitMs)));
      // Again when a handler becomes interruptible while waited for (a dismissal once its PIN is checked).
      while (this.handling.size > 0 && !over) {
        const changed = new Promise<void>((r) => (this.handlingChanged = r));
        await Promise.race([Promise.allSettled([...this.handling]), changed, bound]);
      }
      this.handlingChanged = undefined;
      clearTimeout(timer);
    }
    // The answers of the handlers that finished are written in the next turns (each connection's chain).
    await new Promise<void>((r) => setImmediate(r));
    return this.handling.size;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    for (const s of this.sockets) s.destroy();
    await closed;
    try {
      unlinkSync(this.path);
    } catch {
      // already gone
    }
  }

  private onConnection(s: Socket): void {
    if (this.sockets.size >= this.o.connectionsMax) {
      // A client gone before the refusal goes out makes its write fail (EPIPE): an 'error' nobody
      // listened to was an uncaught exception, and ended the site.
      s.on('error', () => s.destroy());
      s.end(`${JSON.stringify({ id: null, ok: false, error: { kind: 'Failed', message: 'too many control connections' } })}\n`);
      return;
    }
    this.sockets.add(s);
    // Idle = no request being answered: a long op (sync.now, agent.run) keeps its connection.
    s.setTimeout(this.o.idleMs, () => s.destroy());
    let inFlight = 0;
    s.once('close', () => this.sockets.delete(s));
    s.on('error', () => s.destroy());
    // Bytes, not text: the limit and its refusal count bytes, and a UTF-8 character never holds the
    // newline's byte, so lines are cut before they are decoded (a character split between two
    // reads is whole in its line). Counted as decoded text, the limit let two-byte characters
    // through at twice the size it names.
    let buffer: Buffer = Buffer.alloc(0);
    let chain = Promise.resolve();
    // Refused, the connection is done with: nothing more it sends is read, nothing more answered.
    const tooLong = () => {
      s.off('data', onData);
      buffer = Buffer.alloc(0);
      s.end(`${JSON.stringify({ id: null, ok: false, error: { kind: 'InvalidArgument', message: `request longer than ${this.o.requestBytesMax} bytes` } })}\n`);
    };
    const onData = (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        // Each line, not only a buffer still waiting for its newline: a long line that came
        // together with its newline was answered.
        if (nl > this.o.requestBytesMax) return void tooLong();
        const line = buffer.toString('utf8', 0, nl);
        buffer = buffer.subarray(nl + 1);
        if (line.trim() === '') continue;
        if (inFlight++ === 0) s.setTimeout(0);
        chain = chain.then(async () => {
          try {
            const answer = await this.answer(line, s);
            let text: string;
            try {
              text = answerLine(answer);
            } catch (e) {
              // A value JSON cannot carry (a cycle): the request is answered all the same. Thrown
              // on, it went unanswered with every later one on the connection (the chain stays
              // rejected), and the rejection nobody handled ended the site.
              text = answerLine({ id: answer.id ?? null, ok: false, error: { kind: 'Failed', message: `the answer to '${opOf(line)}' cannot be sent: ${errorOf(e).message}` } });
            }
            if (s.writable) s.write(text);
          } finally {
            if (--inFlight === 0 && !s.destroyed) s.setTimeout(this.o.idleMs);
          }
        });
      }
      if (buffer.length > this.o.requestBytesMax) tooLong();
    };
    s.on('data', onData);
  }

  private async answer(line: string, s: Socket): Promise<Record<string, unknown>> {
    let req: { id?: unknown; op?: unknown; args?: unknown; heartbeatMs?: unknown };
    try {
      req = JSON.parse(line) as typeof req;
    } catch {
      return { id: null, ok: false, error: { kind: 'InvalidArgument', message: 'expected one JSON object per line' } };
    }
    const id = req?.id ?? null;
    if (!req || typeof req !== 'object' || typeof req.op !== 'string') return { id, ok: false, error: { kind: 'InvalidArgument', message: 'expected {"id", "op", "args"?}' } };
    // The site is stopping (`quiesce`): nothing new begins on what it is closing.
    if (this.quiescing) return { id, ok: false, error: { kind: 'Failed', message: 'the site is stopping; try again once it has started again' } };
    const h = this.handlers.get(req.op);
    if (!h) return { id, ok: false, error: { kind: 'UnknownOp', message: `unknown op '${req.op}' (ops: ${[...this.handlers.keys()].join(', ')})` } };
    const args = req.args && typeof req.args === 'object' && !Array.isArray(req.args) ? (req.args as Record<string, unknown>) : {};
    const hb = req.heartbeatMs;
    if (hb !== undefined && !(typeof hb === 'number' && Number.isSafeInteger(hb) && hb >= HEARTBEAT_MS_MIN && hb <= HEARTBEAT_MS_MAX)) {
      return { id, ok: false, error: { kind: 'InvalidArgument', message: `heartbeatMs: expected an integer from ${HEARTBEAT_MS_MIN} to ${HEARTBEAT_MS_MAX} (ms), got ${JSON.stringify(hb)}` } };
    }
    const started = performance.now();
    // Kept, not sent: a handler reports as often as it likes, the client hears it at the next beat.
    let progress: Record<string, unknown> | undefined;
    let running: Promise<unknown> | undefined;
    const work: ControlWork = {
      progress: (p) => {
        progress = p;
      },
      interruptible: () => {
        if (running) this.handling.delete(running);
        running = undefined;
        this.handlingChanged?.();
      },
    };
    const beat =
      hb === undefined
        ? undefined
        : setInterval(() => {
            if (!s.destroyed) s.write(`${JSON.stringify({ id, working: true, elapsedMs: Math.round(performance.now() - started), ...(progress === undefined ? {} : { progress }) })}\n`);
          }, hb);
    try {
      const p = Promise.resolve().then(() => h(args, work));
      running = p;
      this.handling.add(p);
      return { id, ok: true, value: (await p) ?? null };
    } catch (e) {
      return { id, ok: false, error: errorOf(e) };
    } finally {
      if (running) this.handling.delete(running);
      if (beat) clearInterval(beat);
    }
  }
}

export interface ControlRequestOptions {
  /**
   * Ask the site for a heartbeat this often while it works on the request: `timeoutMs` then bounds
   * the silence between two lines, not the whole wait (for ops whose length grows with the data: a
   * dead-letter replay of a flood).
   */
  readonly heartbeatMs?: number;
  /**
   * Called at each heartbeat with the time the site has worked on the request and, once its
   * handler has said, how far it has come (`ControlWork.progress`; an object, else undefined).
   */
  readonly onWorking?: (elapsedMs: number, progress: Record<string, unknown> | undefined) => void;
}

/**
 * Sends one request to the site listening on `path`; resolves with its value or throws
 * ControlError. `timeoutMs`: the whole wait, or with `heartbeatMs` the longest silence.
 */
export function controlRequest(path: string, op: string, args: Record<string, unknown> = {}, timeoutMs = 10_000, options: ControlRequestOptions = {}): Promise<unknown> {
  const { heartbeatMs, onWorking } = options;
  if (heartbeatMs !== undefined && !(Number.isSafeInteger(heartbeatMs) && heartbeatMs >= HEARTBEAT_MS_MIN && heartbeatMs <= HEARTBEAT_MS_MAX)) {
    throw new RangeError(`heartbeatMs: expected an integer from ${HEARTBEAT_MS_MIN} to ${HEARTBEAT_MS_MAX} (ms), got ${heartbeatMs}`);
  }
  if (heartbeatMs !== undefined && !(timeoutMs > heartbeatMs)) throw new RangeError(`timeoutMs: expected more than heartbeatMs (${heartbeatMs}), got ${timeoutMs}`);
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let buffer = '';
    let settled = false;
    let heard = false;
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(t);
      s.destroy();
      f();
    };
    const silent = () =>
      finish(() =>
        reject(
          new ControlError(
            'Timeout',
            heartbeatMs !== undefined && heard
              ? `the site on ${path} went silent for ${timeoutMs} ms while it worked on '${op}'; it may still be working on it or have finished it (its result is unknown)`
              : `no answer to '${op}' from ${path} within ${timeoutMs} ms`,
          ),
        ),
      );
    let t = setTimeout(silent, timeoutMs);
    s.setEncoding('utf8');
    s.once('connect', () => s.write(`${JSON.stringify({ id: 1, op, args, ...(heartbeatMs === undefined ? {} : { heartbeatMs }) })}\n`));
    s.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while (!settled && (nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let res: { ok?: boolean; working?: boolean; elapsedMs?: number; progress?: unknown; value?: unknown; error?: { kind?: string; message?: string } };
        try {
          res = JSON.parse(line) as typeof res;
        } catch {
          return finish(() => reject(new ControlError('Failed', `unreadable answer from ${path}`)));
        }
        if (heartbeatMs !== undefined && res.working === true && res.ok === undefined) {
          heard = true;
          clearTimeout(t);
          t = setTimeout(silent, timeoutMs);
          const p = res.progress;
          onWorking?.(typeof res.elapsedMs === 'number' ? res.elapsedMs : 0, p !== null && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : undefined);
          continue;
        }
        if (res.ok) finish(() => resolve(res.value));
        else finish(() => reject(new ControlError((res.error?.kind as ControlErrorKind) ?? 'Failed', res.error?.message ?? 'failed')));
      }
    });
    s.once('error', (e) =>
      finish(() => reject(new ControlError('NotRunning', `no site answers on ${path} (${(e as NodeJS.ErrnoException).code ?? e.message})`))),
    );
    // The site stopped or crashed before it answered: what it did is unknown, but it is gone.
    s.once('close', () => finish(() => reject(new ControlError('Disconnected', `${path} closed the connection without an answer to '${op}' (the site stopped?)`))));
  });
}
