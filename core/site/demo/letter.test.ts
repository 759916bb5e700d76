// The demo makes a dead letter now and then (yard.ts: a door reported in `service`), so a newcomer
// can try the Dead letters screen: on a running demo site the letter arrives with a reason a shift
// lead can read, a replay does not mend it (the same contract refuses it again), and it is
// dismissed with a note. Fast steps (10 ms) bring the first one within 3 to 6 s.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DeadLetterView } from '../api.ts';
import { DEMO_ADMIN, Site } from '../site.ts';
import { session } from '../test-support/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-demo-letter-'));
let site: Site | undefined;
afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the demo\'s dead letter', () => {
  it('arrives from the yard system with a reason naming the field, stays open after a replay, and is dismissed with a note', async () => {
    site = await Site.start({ data: join(dir, 'demo'), demo: true, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, demoStepMs: 10, demoSeed: 7 });
    const s = session();
    await site.service.call('signIn', { user: DEMO_ADMIN.name, secret: DEMO_ADMIN.pin }, s);
    const open = async () => (await site!.service.call('deadLetters', { status: 'open' }, s)) as DeadLetterView[];
    // Bounded: 600 tries, 60 s (the first comes after 300 to 600 steps of 10 ms, 3 to 6 s on a
    // quiet machine; a run of the suite at load 10 once took over 30 s to bring it).
    let letters: DeadLetterView[] = [];
    const deadline = Date.now() + 60_000;
    for (let i = 0; i < 600 && letters.length === 0 && Date.now() < deadline; i++) {
      site.ingestor.commitAll();
      letters = await open();
      if (letters.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(letters.length).toBeGreaterThan(0);
    const letter = letters[0]!;
    expect([letter.topic, letter.reason]).toEqual(['tilstand/demo/events/yard/doors', 'contract_violation']);
    expect(letter.detail).toContain('expected one of free|occupied|down, got "service"');
    expect(JSON.parse(letter.payload)).toMatchObject({ op: 'u', after: { state: 'service' }, contract: { name: 'yard.doors', version: 1 } });

    // A replay checks it against the same contract: it fails again and stays open.
    expect(await site.service.call('replayDeadLetters', { ids: [letter.id] }, s)).toMatchObject({ replayed: 0, failed: 1 });
    expect((await open()).map((l) => l.id)).toContain(letter.id);
    // Dismissed with a note, it is closed under the shift lead's name.
    expect(await site.service.call('dismissDeadLetters', { ids: [letter.id], note: 'door in service, yard system told' }, s)).toMatchObject({ dismissed: 1 });
    const dismissed = (await site.service.call('deadLetters', { status: 'dismissed' }, s)) as DeadLetterView[];
    expect(dismissed.find((l) => l.id === letter.id)?.dismissed).toMatchObject({ by: DEMO_ADMIN.name, note: 'door in service, yard system told' });
  }, 90_000);
});
