// First run: a data directory without config.json has no site id and no admin. Until someone
// sets them, the UI serves only the first-run screen through `FirstRunBackend`: the public
// methods `firstRun` (status) and `initSite` (site id + first admin → `initDataDir`); every
// other method answers `conflict` ("not set up yet"). `initSite` succeeds once; the caller
// (`tilstand start`, the Electron main process) then starts the real Site and swaps the backend
// (`SwitchingBackend`) or restarts the HTTP server on the same port.
//
// Concurrency: single-threaded; a second initSite while the first runs is refused.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { guessablePinRefusal, SiteApiError, type InputAge, type SessionContext, type SiteApiMethods, type SiteBackend, type SiteEvent, type SiteMethod } from './api.ts';
import { dataPaths, readConfig } from './config.ts';
import { initDataDir, InitError } from './init.ts';
import { DataFormatError } from './data-format.ts';
import { readRestoreNote } from '../sync/restore.ts';
import { guessablePin, guessablePinMessage } from '../inbox/users.ts';

/** True when `<data>/config.json` exists. */
export function isInitialized(data: string): boolean {
  return existsSync(dataPaths(resolve(data)).config);
}

export class FirstRunBackend implements SiteBackend {
  private busy = false;
  private doneResolve!: (siteId: string) => void;
  /** Resolves with the site id once initSite has written the data directory. */
  readonly done: Promise<string> = new Promise((r) => (this.doneResolve = r));

  constructor(private readonly data: string) {}

  async call<M extends SiteMethod>(method: M, req: SiteApiMethods[M]['req'], _session: SessionContext): Promise<SiteApiMethods[M]['res']> {
    type R = SiteApiMethods[M]['res'];
    if (method === 'me') return null as R;
    if (method === 'firstRun') return this.state() as R;
    if (method === 'initSite') return (await this.init(req as SiteApiMethods['initSite']['req'])) as R;
    throw new SiteApiError('conflict', 'this site is not set up yet: finish the first-run screen (site id and first admin)', undefined, { code: 'site.notSetUp' });
  }

  subscribe(_listener: (e: SiteEvent) => void): () => void {
    return () => undefined;
  }

  private state(): SiteApiMethods['firstRun']['res'] {
    if (!isInitialized(this.data)) return { initialized: false, siteId: null, restoredSite: restoredSite(this.data) };
    // Set up: this backend answers only until the site it hands over to runs.
    return { initialized: true, siteId: readConfig(resolve(this.data)).site, restoredSite: null, starting: true };
  }

  private async init(req: SiteApiMethods['initSite']['req']): Promise<SiteApiMethods['firstRun']['res']> {
    if (this.busy || isInitialized(this.data)) throw new SiteApiError('conflict', 'this site is already set up', undefined, { code: 'site.alreadySetUp' });
    const why = guessablePin(req.adminPin);
    if (why) throw new SiteApiError('invalid', `adminPin: ${guessablePinMessage(req.adminPin, why)}`, undefined, guessablePinRefusal(req.adminPin, why));
    this.busy = true;
    try {
      await initDataDir({ data: this.data, site: req.siteId, admin: { name: req.adminName, pin: req.adminPin } });
    } catch (e) {
      this.busy = false;
      // Its code, when it has one, lets the first-run screen word it (the message names the data directory: IT's words).
      if (e instanceof InitError) throw new SiteApiError(e.kind === 'AlreadyExists' ? 'conflict' : 'invalid', e.message, undefined, e.refusal);
      // A directory a newer version marked (its restore): the screen says so, not "something went wrong".
      if (e instanceof DataFormatError) throw new SiteApiError('conflict', e.message);
      throw e;
    }
    this.doneResolve(req.siteId);
    return { initialized: true, siteId: req.siteId, restoredSite: null, starting: true };
  }
}

/** A backend whose target is swapped when the real site is up (Electron's first run). */
export class SwitchingBackend implements SiteBackend {
  private readonly listeners = new Set<(e: SiteEvent) => void>();
  private unsubscribe: () => void;

  constructor(private target: SiteBackend) {
    this.unsubscribe = target.subscribe((e) => this.emit(e));
  }

  switchTo(target: SiteBackend): void {
    this.unsubscribe();
    this.target = target;
    this.unsubscribe = target.subscribe((e) => this.emit(e));
  }

  call<M extends SiteMethod>(method: M, req: SiteApiMethods[M]['req'], session: SessionContext, input?: InputAge): Promise<SiteApiMethods[M]['res']> {
    return this.target.call(method, req, session, input);
  }

  subscribe(listener: (e: SiteEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  signedIn(session: SessionContext): boolean {
    return this.target.signedIn ? this.target.signedIn(session) : session.user !== null;
  }

  private emit(e: SiteEvent): void {
    for (const l of this.listeners) l(e);
  }
}

/** The site a restore note in `data` names, or null (none, or unreadable: init reports that). */
function restoredSite(data: string): string | null {
  try {
    return readRestoreNote(resolve(data))?.site ?? null;
  } catch {
    return null;
  }
}
