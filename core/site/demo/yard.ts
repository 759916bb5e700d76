// Simulated yard system: six dock doors (D-01 … D-06) reported on stream `doors` with contract
// `yard.doors` v1 (docs/modules.md, section 4). A trailer arrives at a free door (occupied, with
// its trailer id), leaves again (free), and now and then a door goes down and is repaired. It is
// not one of the seed modules: its rows go to `yard_doors`, a table of the demo site's own
// (demo/site.ts), which the Tables and History screens show beside the seed tables.
//
// Pace: a change in about a third of the steps (one every ~3 s at the default step), so the
// table moves while someone watches, but a door keeps its state long enough to be read.
//
// A dead letter now and then: every 300 to 600 steps (5 to 10 minutes at the default step; the
// count drawn from the seed) a technician's handheld puts a door in `service`, a state the
// contract yard.doors v1 does not have, and the yard system reports it. The site refuses the
// event (contract_violation, naming `after.state` and the states it knows), so the Dead letters
// screen has a letter to look at. No replay mends it — a replay checks it against the same
// contract, and a version that adds a state is not FULL_TRANSITIVE — so it is one to dismiss with
// a note (what the door really was). The module's own door keeps its state: its next report of
// that door is an ordinary one.

import type { Contract } from '../../ingest/contracts.ts';
import { DemoModule, type DemoModuleOptions } from './module.ts';
import { isoMs } from './warehouse.ts';

export const YARD_DOORS: Contract = {
  name: 'yard.doors',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  doc: 'A dock door and the trailer at it, as the yard system reports it.',
  fields: [
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING NOT NULL', symbols: ['free', 'occupied', 'down'] },
    { name: 'trailer_id', type: 'STRING', default: null },
    { name: 'since', type: 'TIMESTAMP(3)', default: null },
  ],
};

export const DEMO_DOORS: readonly string[] = Array.from({ length: 6 }, (_, i) => `D-${String(i + 1).padStart(2, '0')}`);

/** Share of the steps that change a door. */
const CHANGE = 0.35;
/** Of those, the share in which a free door goes down (rare: a door is mostly free or occupied). */
const BREAKS = 0.05;
/** Of those, the share in which a down door picked is repaired. */
const REPAIRS = 0.25;

const STATES = new Set<unknown>(['free', 'occupied', 'down']);

/** Steps between two `service` reports (the demo's dead letter), drawn from this range. */
export const SERVICE_EVERY_STEPS = { min: 300, max: 600 } as const;
/** The state the yard system reports that its contract does not have. */
export const SERVICE_STATE = 'service';

interface Door {
  door_id: string;
  state: 'free' | 'occupied' | 'down';
  trailer_id: string | null;
  since: string;
}

export class YardModule extends DemoModule {
  private readonly doors = new Map<string, Door>();
  private nextTrailer = 1;
  /** Steps left until the next `service` report. */
  private untilService: number;

  constructor(o: DemoModuleOptions) {
    super('yard', o);
    const since = isoMs(this.now());
    for (const door_id of DEMO_DOORS) {
      const occupied = this.rng.chance(0.5);
      this.doors.set(door_id, { door_id, state: occupied ? 'occupied' : 'free', trailer_id: occupied ? this.trailer() : null, since });
    }
    this.untilService = this.serviceGap();
  }

  protected exportState(): unknown {
    return { nextTrailer: this.nextTrailer, doors: [...this.doors.values()], untilService: this.untilService };
  }

  protected importState(state: unknown): void {
    const v = state as { nextTrailer?: unknown; doors?: unknown; untilService?: unknown } | null;
    if (!v || !Number.isSafeInteger(v.nextTrailer) || !Array.isArray(v.doors)) throw new Error('expected {nextTrailer, doors}');
    // A state saved before the `service` reports has no count: the seed's first one stands.
    if (v.untilService !== undefined && !(Number.isSafeInteger(v.untilService) && (v.untilService as number) >= 1 && (v.untilService as number) <= SERVICE_EVERY_STEPS.max)) {
      throw new Error(`untilService: expected a whole number from 1 to ${SERVICE_EVERY_STEPS.max}, got ${JSON.stringify(v.untilService)}`);
    }
    const doors = v.doors as Door[];
    for (const d of doors) if (!this.doors.has(d?.door_id) || !STATES.has(d.state)) throw new Error(`not a door of the demo yard: ${JSON.stringify(d)}`);
    if (new Set(doors.map((d) => d.door_id)).size !== this.doors.size) throw new Error(`${doors.length} doors, expected ${DEMO_DOORS.join(', ')}`);
    this.doors.clear();
    for (const d of doors) this.doors.set(d.door_id, d);
    this.nextTrailer = v.nextTrailer as number;
    if (v.untilService !== undefined) this.untilService = v.untilService as number;
  }

  protected snapshot(): void {
    for (const d of this.doors.values()) this.emit('doors', 'r', null, { ...d }, YARD_DOORS);
  }

  protected step(): void {
    if (--this.untilService <= 0) {
      this.untilService = this.serviceGap();
      return this.reportService(this.rng.pick([...this.doors.values()]));
    }
    if (!this.rng.chance(CHANGE)) return;
    const door = this.rng.pick([...this.doors.values()]);
    if (door.state === 'down') {
      // Repaired after about a minute (at the default step): long enough that the agent's run,
      // once a minute, sees it and the door-down rule file's notice reaches the inbox.
      if (this.rng.chance(REPAIRS)) this.set(door, 'free', null);
    } else if (door.state === 'occupied') {
      this.set(door, 'free', null); // the trailer leaves
    } else if (this.rng.chance(BREAKS)) {
      this.set(door, 'down', null);
    } else {
      this.set(door, 'occupied', this.trailer()); // a trailer arrives
    }
  }

  private serviceGap(): number {
    return this.rng.int(SERVICE_EVERY_STEPS.min, SERVICE_EVERY_STEPS.max);
  }

  /** The door as the yard system reports it in `service`: refused by the site, so the door here stays as it was. */
  private reportService(door: Door): void {
    this.emit('doors', 'u', { ...door }, { ...door, state: SERVICE_STATE, since: isoMs(this.now()) }, YARD_DOORS);
  }

  private trailer(): string {
    return `TR-${String(this.nextTrailer++).padStart(4, '0')}`;
  }

  private set(door: Door, state: Door['state'], trailer: string | null): void {
    const before = { ...door };
    door.state = state;
    door.trailer_id = trailer;
    door.since = isoMs(this.now());
    this.emit('doors', 'u', before, { ...door }, YARD_DOORS);
  }
}
