// The common part of a simulated module: a ModuleClient, a seeded generator, a timer that takes
// one step every `stepMs`, and counters. A subclass publishes its snapshot at start (`r` events,
// so Tilstand's tables fill at once) and one change per step; operations also answers commands.
//
// Concurrency: steps run on the timer; publishes are not awaited one by one (the client keeps
// order per stream and resolves on PUBACK). stop() clears the timer and closes the client; events
// still waiting for PUBACK stay in the module's outbox and go out on the next start.

import { ModuleClient } from '../../ingest/module-client/index.ts';
import type { ContractRef, Op, RowImage } from '../../ingest/envelope.ts';
import { Rng, subSeed } from './rng.ts';

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
  nowMs?: () => number;
  onWarning?: (message: string) => void;
}

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

  constructor(module: string, o: DemoModuleOptions) {
    if (!Number.isSafeInteger(o.stepMs) || o.stepMs < 10) throw new RangeError(`stepMs: expected an integer ≥ 10, got ${o.stepMs}`);
    this.module = module;
    this.now = o.nowMs ?? Date.now;
    this.rng = new Rng(subSeed(o.seed, module));
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

  /** Publishes the snapshot and starts stepping; the client connects (and reconnects) in the background. */
  start(): void {
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
    await this.client.close();
  }

  getStats(): DemoModuleStats {
    return { ...this.stats };
  }

  /** Every row the module owns, as `r` events. */
  protected abstract snapshot(): void;
  /** One change. */
  protected abstract step(): void;

  protected emit(stream: string, op: Op, before: RowImage | null, after: RowImage | null, contract: ContractRef): void {
    this.stats.published++;
    this.client.publish(stream, op, before, after, contract).then(
      () => this.stats.acked++,
      () => this.stats.failed++,
    );
  }
}
