// Simulated inventory, commerce and procurement modules. Each owns one quantity per (item,
// location) of the demo warehouse (20 × 4 = 80 rows) and feeds its own column group of `stock`:
//   inventory   stream `stock`         qty           stock moves (picks take, put-aways add)
//   commerce    stream `reservations`  reserved_qty  orders reserve and release quantities
//   procurement stream `inbound`       inbound_qty   purchase orders open; deliveries arrive
// One step changes one row (`u` with the previous image as `before`).
//
// Procurement also obeys the agent's `replenish {item, location, qty}` (stock-reorder): it opens a
// purchase order, so the row's inbound_qty rises by qty (one `u` event, the effect Tilstand sees),
// and answers {ok: true, result: {item, location, inbound_qty}} or {ok: false, error}.

import type { Contract } from '../../ingest/contracts.ts';
import type { Command, CommandResult } from '../../ingest/module-client/index.ts';
import { COMMERCE_RESERVATIONS, INVENTORY_STOCK, PROCUREMENT_INBOUND } from '../../ingest/seed-contracts.ts';
import type { RowImage } from '../../ingest/envelope.ts';
import { DemoModule, type DemoModuleOptions } from './module.ts';
import { DEMO_ITEMS, DEMO_LOCATIONS, isoMs } from './warehouse.ts';

interface Spec {
  module: string;
  stream: string;
  contract: Contract;
  field: string;
  /** Starting quantity. */
  initial: (m: QuantityModule) => number;
  /** The next quantity from the current one. */
  change: (m: QuantityModule, qty: number) => number;
  /** Extra fields of the row image. */
  extra?: (m: QuantityModule, qty: number) => RowImage;
  /** Commands the module obeys: the change to the addressed row's quantity, or why not. */
  command?: (m: QuantityModule, c: Command, qty: number) => { qty: number } | { error: string };
}

/** On hand above which the demo's inventory takes more than it puts away. */
export const ON_HAND_HIGH = 120;

/** The largest quantity one command may add (a typo's guard, not a business rule). */
const COMMAND_QTY_MAX = 100_000;

class QuantityModule extends DemoModule {
  private readonly rows = new Map<string, RowImage>();

  constructor(
    private readonly spec: Spec,
    o: DemoModuleOptions,
  ) {
    super(spec.module, o);
    for (const item of DEMO_ITEMS) {
      for (const location of DEMO_LOCATIONS) {
        const qty = spec.initial(this);
        this.rows.set(`${item}@${location}`, this.image(item, location, qty));
      }
    }
    if (spec.command) this.client.onCommand((c) => this.onCommand(c));
  }

  private onCommand(c: Command): CommandResult {
    this.stats.commands++;
    const key = `${String(c.item)}@${String(c.location)}`;
    const before = typeof c.item === 'string' && typeof c.location === 'string' ? this.rows.get(key) : undefined;
    if (!before) return { ok: false, error: `no such item and location: ${JSON.stringify(c.item)} at ${JSON.stringify(c.location)}` };
    const r = this.spec.command!(this, c, before[this.spec.field] as number);
    if ('error' in r) return { ok: false, error: r.error };
    this.set(key, before, r.qty);
    return { ok: true, result: { item: before.item, location: before.location, [this.spec.field]: r.qty } };
  }

  int(min: number, max: number): number {
    return this.rng.int(min, max);
  }

  chance(p: number): boolean {
    return this.rng.chance(p);
  }

  nowMs(): number {
    return this.now();
  }

  protected exportState(): unknown {
    return { rows: [...this.rows.values()] };
  }

  protected importState(state: unknown): void {
    const rows = (state as { rows?: unknown } | null)?.rows;
    if (!Array.isArray(rows)) throw new Error('expected {rows}');
    const next = new Map<string, RowImage>();
    for (const r of rows as RowImage[]) {
      const key = `${String(r?.item)}@${String(r?.location)}`;
      if (!this.rows.has(key) || typeof r[this.spec.field] !== 'number') throw new Error(`not a ${this.spec.stream} row of the demo warehouse: ${JSON.stringify(r)}`);
      next.set(key, r);
    }
    if (next.size !== this.rows.size) throw new Error(`${next.size} rows, expected ${this.rows.size}`);
    this.rows.clear();
    for (const [k, r] of next) this.rows.set(k, r);
  }

  protected snapshot(): void {
    for (const row of this.rows.values()) this.emit(this.spec.stream, 'r', null, { ...row }, this.spec.contract);
  }

  protected step(): void {
    const key = `${this.rng.pick(DEMO_ITEMS)}@${this.rng.pick(DEMO_LOCATIONS)}`;
    const before = this.rows.get(key)!;
    this.set(key, before, this.spec.change(this, before[this.spec.field] as number));
  }

  private set(key: string, before: RowImage, qty: number): void {
    const after = this.image(before.item as string, before.location as string, qty);
    this.rows.set(key, after);
    this.emit(this.spec.stream, 'u', { ...before }, { ...after }, this.spec.contract);
  }

  private image(item: string, location: string, qty: number): RowImage {
    return { item, location, [this.spec.field]: qty, ...(this.spec.extra?.(this, qty) ?? {}) };
  }
}

export const inventoryModule = (o: DemoModuleOptions): DemoModule =>
  new QuantityModule(
    {
      module: 'inventory',
      stream: 'stock',
      contract: INVENTORY_STOCK,
      field: 'qty',
      initial: (m) => m.int(0, 200),
      // Picks take 1–12, put-aways add 5–40. Above ON_HAND_HIGH picks are likelier, so a row
      // hovers there instead of growing ~5 a change (the demo's stock rose for ever and, after a
      // few hours, no row came near a reorder point).
      change: (m, q) => Math.max(0, q + (m.chance(q > ON_HAND_HIGH ? 0.8 : 0.6) ? -m.int(1, 12) : m.int(5, 40))),
    },
    o,
  );

export const commerceModule = (o: DemoModuleOptions): DemoModule =>
  new QuantityModule(
    {
      module: 'commerce',
      stream: 'reservations',
      contract: COMMERCE_RESERVATIONS,
      field: 'reserved_qty',
      initial: (m) => m.int(0, 30),
      change: (m, q) => Math.max(0, q + (m.chance(0.55) ? m.int(1, 8) : -m.int(1, 10))),
    },
    o,
  );

export const procurementModule = (o: DemoModuleOptions): DemoModule =>
  new QuantityModule(
    {
      module: 'procurement',
      stream: 'inbound',
      contract: PROCUREMENT_INBOUND,
      field: 'inbound_qty',
      initial: (m) => (m.chance(0.3) ? m.int(10, 100) : 0),
      // A delivery arrives (inbound falls to 0) or a purchase order opens (inbound rises).
      change: (m, q) => (q > 0 && m.chance(0.5) ? 0 : q + m.int(10, 80)),
      extra: (m, q) => ({ next_due_at: q > 0 ? isoMs(m.nowMs() + m.int(2, 72) * 3600_000) : null }),
      command: (_m, c, q) => {
        if (c.action !== 'replenish') return { error: `unknown action ${JSON.stringify(c.action)} (expected replenish)` };
        const n = c.qty;
        if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > COMMAND_QTY_MAX) return { error: `qty: expected an integer from 1 to ${COMMAND_QTY_MAX}, got ${JSON.stringify(n)}` };
        return { qty: q + n };
      },
    },
    o,
  );
