// The common part of a simulated module: a ModuleClient, a seeded generator, a timer that takes
// one step every `stepMs`, and counters. A subclass publishes its snapshot at start (`r` events,
// so Tilstand's tables fill at once) and one change per step; operations also answers commands.
//
// Concurrency: steps run on the timer; publishes are not awaited one by one (the client keeps
// order per stream and resolves on PUBACK). stop() clears the timer and closes the client; events
// still waiting for PUBACK stay in the module's outbox and go out on the next start.
//
// State: with `statePath`, a module keeps its rows (and its generator) in that JSON file, written
// (temp file + rename) after every burst of changes and at stop, and goes on from it at the next
// start — as a real module keeps its database. Without it, a restarted demo began again from the
// seed: its snapshot upserted the seed's rows, and the rows made since (new jobs) stayed in
// Tilstand's tables as ghosts the module no longer knew (commands to them failed). A file written
// for another seed, or one that does not parse, is set aside with a warning and the seed's state
// is used.

import { readFileSync, renameSync } from 'node:fs';
import { localFileIO } from '../../lsm/index.ts';
import { ModuleClient } from '../../ingest/module-client/index.ts';
import type { ContractRef, Op, RowImage } from '../../ingest/envelope.ts';
import { Rng, subSeed } from './rng.ts';

/** The shortest step of a demo module. */
export const DEMO_MIN_STEP_MS = 10;
/** The longest: a timer's period above 2^31 − 1 ms is taken as 1 ms by Node (TimeoutOverflowWarning). */
export const DEMO_MAX_STEP_MS = 2 ** 31 - 1;

export interface DemoModuleOptions {
  url: string;
  site: string;
  username: string;
  password: string;
  /** The module's outbox file. */
  outboxPath: string;
  seed: number;
  /** Time between two steps. */
  stepMs: number;
  /** Where the module keeps its state between runs (none: every start begins from the seed). */
  statePath?: string;
  nowMs?: () => number;
  onWarning?: (message: string) => void;
}

const STATE_FORMAT = 'tilstand-demo-module-1';

export interface DemoModuleStats {
  module: string;
  published: number;
  acked: number;
  failed: number;
  commands: number;
}

export abstract class DemoModule {
  readonly module: string;
  protected readonly client: ModuleClient;
  protected readonly rng: Rng;
  protected readonly now: () => number;
  private readonly stepMs: number;
  private timer: NodeJS.Timeout | undefined;
  protected readonly stats: DemoModuleStats;
  private readonly seed: number;
  private readonly statePath: string | undefined;
  private readonly warn: (message: string) => void;
  private saveQueued = false;
  /** `stop()` was called: it saved the state; nothing is saved after it. */
  private stopped = false;
  /** `start()` was called (and loaded the saved state): only then does `stop()` save it. */
  private started = false;

  constructor(module: string, o: DemoModuleOptions) {
    if (!Number.isSafeInteger(o.stepMs) || o.stepMs < DEMO_MIN_STEP_MS || o.stepMs > DEMO_MAX_STEP_MS) {
      throw new RangeError(`stepMs: expected an integer from ${DEMO_MIN_STEP_MS} to ${DEMO_MAX_STEP_MS}, got ${o.stepMs}`);
    }
    this.module = module;
    this.now = o.nowMs ?? Date.now;
    this.rng = new Rng(subSeed(o.seed, module));
    this.seed = o.seed;
    this.statePath = o.statePath;
    this.warn = o.onWarning ?? (() => undefined);
    this.stepMs = o.stepMs;
    this.stats = { module, published: 0, acked: 0, failed: 0, commands: 0 };
    this.client = new ModuleClient({
      url: o.url,
      username: o.username,
      password: o.password,
      site: o.site,
      module,
      outboxPath: o.outboxPath,
      now_ms: this.now,
      reconnect_period_ms: 500,
      onWarning: o.onWarning ?? (() => undefined),
    });
  }

  /**
   * Goes on from the saved state (if any), publishes the snapshot and starts stepping; the client
   * connects (and reconnects) in the background.
   */
  start(): void {
    this.load();
    this.started = true;
    this.snapshot();
    this.timer = setInterval(() => this.step(), this.stepMs);
  }

  /** Resolves once the module has connected to the broker for the first time. */
  connected(): Promise<void> {
    return this.client.connected();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.stopped = true;
    // A module never started holds the seed's state, not the saved one: saving it overwrote that.
    if (this.started) this.saveOrWarn();
    await this.client.close();
  }

  getStats(): DemoModuleStats {
    return { ...this.stats };
  }

  /** Every row the module owns, as `r` events. */
  protected abstract snapshot(): void;
  /** One change. */
  protected abstract step(): void;
  /** The module's rows and counters, as JSON (the generator is saved beside them). */
  protected abstract exportState(): unknown;
  /** Takes over a state `exportState` gave; throws when it does not fit (the seed's state stays). */
  protected abstract importState(state: unknown): void;

  private load(): void {
    if (this.statePath === undefined) return;
    let text: string;
    try {
      text = readFileSync(this.statePath, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    try {
      const saved = JSON.parse(text) as { format?: unknown; seed?: unknown; rng?: unknown; state?: unknown };
      if (saved.format !== STATE_FORMAT) throw new Error(`format ${JSON.stringify(saved.format)}, expected ${STATE_FORMAT}`);
      if (saved.seed !== this.seed) throw new Error(`written for seed ${JSON.stringify(saved.seed)}, this run has seed ${this.seed}`);
      if (typeof saved.rng !== 'number') throw new Error('no generator state');
      this.importState(saved.state);
      this.rng.restore(saved.rng);
    } catch (e) {
      const aside = `${this.statePath}.unused-${Date.now()}`;
      renameSync(this.statePath, aside);
      this.warn(`${this.module}: state ${this.statePath} not used (${(e as Error).message}); kept as ${aside}, starting from seed ${this.seed}`);
    }
  }

  /**
   * Writes the state now (temp file fsynced + rename + folder fsynced: a reader, or a start after a
   * power cut, sees the old file or the new one). After a cut the state may be older than what the
   * module published; the site then sees a gap or a duplicate seq, as with any module that lost data.
   */
  private save(): void {
    if (this.statePath === undefined) return;
    localFileIO.replaceAtomic(this.statePath, Buffer.from(JSON.stringify({ format: STATE_FORMAT, seed: this.seed, rng: this.rng.saved, state: this.exportState() })));
  }

  private saveOrWarn(): void {
    try {
      this.save();
    } catch (e) {
      this.warn(`${this.module}: cannot save state to ${this.statePath}: ${(e as Error).message}`);
    }
  }

  protected emit(stream: string, op: Op, before: RowImage | null, after: RowImage | null, contract: ContractRef): void {
    // One save per burst of changes (a step, a command, the snapshot), after the burst.
    if (!this.saveQueued && !this.stopped && this.statePath !== undefined) {
      this.saveQueued = true;
      setImmediate(() => {
        this.saveQueued = false;
        // A save queued before stop(), which saved: none after it (its folder may be gone by then).
        if (!this.stopped) this.saveOrWarn();
      });
    }
    this.stats.published++;
    this.client.publish(stream, op, before, after, contract).then(
      () => this.stats.acked++,
      () => this.stats.failed++,
    );
  }
}
