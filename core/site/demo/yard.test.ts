// The demo's yard module: its doors move the same way for the same seed, trailers arrive and
// leave, a door is down now and then but rarely, and a restarted module goes on from its saved
// state exactly where an uninterrupted one would be. No broker: its client never connects
// (events wait in the outbox), as in the other demo modules' tests.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validate } from '../../ingest/contracts.ts';
import { DEMO_DOORS, SERVICE_EVERY_STEPS, SERVICE_STATE, YARD_DOORS, YardModule } from './yard.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-demo-yard-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Door {
  door_id: string;
  state: string;
  trailer_id: string | null;
  since: string;
}
type Inside = { step(): void; exportState(): { nextTrailer: number; doors: Door[] } };

let made = 0;
/** A yard module on a broker nobody listens at; a fixed clock, so its rows depend on the seed only. */
function yard(seed: number, statePath?: string): { mod: YardModule; m: Inside } {
  const mod = new YardModule({ url: 'mqtt://127.0.0.1:1', site: 'demo', username: 'yard', password: '-', outboxPath: join(dir, `yard-${made++}.outbox.db`), seed, stepMs: 600_000, nowMs: () => Date.UTC(2026, 11, 5, 12), ...(statePath ? { statePath } : {}) });
  return { mod, m: mod as unknown as Inside };
}

describe('the demo yard module', () => {
  it('moves its doors the same way for the same seed: trailers arrive and leave, a door is down now and then for about a minute', async () => {
    const a = yard(7);
    const b = yard(7);
    const c = yard(8);
    try {
      const trace = (m: Inside) => {
        const seen: string[] = [];
        let down = 0;
        let arrivals = 0;
        let maxDown = 0;
        const downSince = new Map<string, number>();
        const downFor: number[] = [];
        for (let i = 0; i < 3600; i++) {
          const before = m.exportState().nextTrailer;
          m.step();
          const doors = m.exportState().doors;
          arrivals += m.exportState().nextTrailer - before;
          const d = doors.filter((x) => x.state === 'down').length;
          down += d;
          maxDown = Math.max(maxDown, d);
          for (const x of doors) {
            if (x.state === 'down' && !downSince.has(x.door_id)) downSince.set(x.door_id, i);
            if (x.state !== 'down' && downSince.has(x.door_id)) {
              downFor.push(i - downSince.get(x.door_id)!);
              downSince.delete(x.door_id);
            }
          }
          seen.push(doors.map((x) => `${x.state}:${x.trailer_id ?? '-'}`).join(','));
        }
        return { seen, down, arrivals, maxDown, downFor: downFor.sort((x, y) => x - y), doors: m.exportState().doors };
      };
      const ta = trace(a.m);
      expect(trace(b.m).seen).toEqual(ta.seen);
      expect(trace(c.m).seen).not.toEqual(ta.seen);
      expect(ta.doors.map((d) => d.door_id)).toEqual(DEMO_DOORS);
      expect(DEMO_DOORS).toEqual(['D-01', 'D-02', 'D-03', 'D-04', 'D-05', 'D-06']);
      // An hour of steps at the default pace: trailers come and go, and an occupied door has one.
      expect(ta.arrivals).toBeGreaterThan(100);
      expect(new Set(ta.seen).size).toBeGreaterThan(50);
      for (const d of ta.doors) expect(d.trailer_id !== null, JSON.stringify(d)).toBe(d.state === 'occupied');
      // Down now and then, rarely: some door was down at some step, but doors were down in under a tenth of the door-steps.
      expect(ta.down).toBeGreaterThan(0);
      expect(ta.down / (3600 * DEMO_DOORS.length)).toBeLessThan(0.2);
      expect(ta.maxDown).toBeLessThanOrEqual(4);
      // A down door stays down for most of a minute (steps of 1 s by default), so the agent's run
      // once a minute sees most of them and the demo's door-down rule file shows its notice.
      expect(ta.downFor.length).toBeGreaterThan(10);
      expect(ta.downFor[ta.downFor.length >> 1]).toBeGreaterThanOrEqual(35);
    } finally {
      await Promise.all([a.mod.stop(), b.mod.stop(), c.mod.stop()]);
    }
  });

  it('reports a door in `service` once every 300 to 600 steps (5 to 10 minutes at the default step), the same for the same seed, an event its contract refuses', async () => {
    const trace = async (seed: number) => {
      const { mod, m } = yard(seed);
      const sent: { step: number; after: Record<string, unknown> }[] = [];
      let step = 0;
      // What the module publishes, caught before its client (which never connects here).
      (mod as unknown as { client: { publish: (...a: unknown[]) => Promise<void> } }).client.publish = (_stream, _op, _before, after) => {
        sent.push({ step, after: after as Record<string, unknown> });
        return Promise.resolve();
      };
      try {
        for (step = 1; step <= 3600; step++) {
          const before = JSON.stringify(m.exportState().doors);
          m.step();
          // A service report leaves the module's doors as they were (the site keeps the last good row).
          if (sent.at(-1)?.step === step && sent.at(-1)!.after.state === SERVICE_STATE) expect(JSON.stringify(m.exportState().doors)).toBe(before);
        }
      } finally {
        await mod.stop();
      }
      return sent.filter((e) => e.after.state === SERVICE_STATE);
    };
    const a = await trace(7);
    expect((await trace(7)).map((e) => e.step)).toEqual(a.map((e) => e.step));
    expect((await trace(8)).map((e) => e.step)).not.toEqual(a.map((e) => e.step));
    // An hour at the default step: 6 to 12 of them, the first within 10 minutes, 5 to 10 minutes apart.
    const steps = a.map((e) => e.step);
    expect(steps.length).toBeGreaterThanOrEqual(6);
    expect(steps.length).toBeLessThanOrEqual(12);
    expect(steps[0]).toBeGreaterThanOrEqual(SERVICE_EVERY_STEPS.min);
    expect(steps[0]).toBeLessThanOrEqual(SERVICE_EVERY_STEPS.max);
    for (let i = 1; i < steps.length; i++) {
      expect(steps[i]! - steps[i - 1]!).toBeGreaterThanOrEqual(SERVICE_EVERY_STEPS.min);
      expect(steps[i]! - steps[i - 1]!).toBeLessThanOrEqual(SERVICE_EVERY_STEPS.max);
    }
    // The site refuses it with a reason a shift lead can read: the field and the states it knows.
    for (const e of a) {
      expect(DEMO_DOORS).toContain(e.after.door_id);
      expect(validate(YARD_DOORS, e.after, 'after')).toEqual({ ok: false, errors: [{ path: 'after.state', message: 'expected one of free|occupied|down, got "service"' }] });
    }
  });

  it('goes on from its saved state after a restart, as if it had never stopped', async () => {
    const statePath = join(dir, 'yard.state.json');
    const first = yard(5, statePath);
    first.mod.start();
    for (let i = 0; i < 200; i++) first.m.step();
    const atStop = first.m.exportState();
    await first.mod.stop();
    const saved = JSON.parse(readFileSync(statePath, 'utf8')) as { seed: number; state: unknown };
    expect(saved.seed).toBe(5);
    expect(saved.state).toEqual(atStop);

    const second = yard(5, statePath);
    const uninterrupted = yard(5);
    try {
      second.mod.start();
      expect(second.m.exportState()).toEqual(atStop); // from the seed again it would hold the seed's doors and trailers
      for (let i = 0; i < 200; i++) uninterrupted.m.step();
      for (let i = 0; i < 200; i++) {
        second.m.step();
        uninterrupted.m.step();
      }
      expect(second.m.exportState()).toEqual(uninterrupted.m.exportState()); // the generator went on too
    } finally {
      await Promise.all([second.mod.stop(), uninterrupted.mod.stop()]);
    }

    // A state that is not the demo yard's is set aside; the module starts from the seed.
    const fresh = yard(5);
    const seedState = fresh.m.exportState();
    await fresh.mod.stop();
    const bad = JSON.parse(readFileSync(statePath, 'utf8')) as { state: { doors: Door[] } };
    bad.state.doors[0]!.door_id = 'D-99';
    writeFileSync(statePath, JSON.stringify(bad));
    const warnings: string[] = [];
    const third = new YardModule({ url: 'mqtt://127.0.0.1:1', site: 'demo', username: 'yard', password: '-', outboxPath: join(dir, 'yard-third.outbox.db'), seed: 5, stepMs: 600_000, nowMs: () => Date.UTC(2026, 11, 5, 12), statePath, onWarning: (w) => warnings.push(w) });
    try {
      third.start();
      expect((third as unknown as Inside).exportState()).toEqual(seedState);
      expect(warnings.join('\n')).toMatch(/yard: state .* not used \(not a door of the demo yard: .*D-99/);
    } finally {
      await third.stop();
    }
  });
});
