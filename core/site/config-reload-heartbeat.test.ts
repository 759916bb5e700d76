// `tilstand config reload` waits as long as the site works on the reload (heartbeats), as a
// dead-letter replay does: a reload that loads rule files on a busy site may take longer than a
// fixed deadline, and was reported failed (exit ≠ 0) while the site went on and applied it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runMain } from './cli/test-support.ts';
import { ControlServer, type ControlHandler } from './control.ts';

let dir: string;
let server: ControlServer | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-reload-heartbeat-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ format: 1, site: 's1' }));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A site whose reload takes `ms` (the socket's own heartbeats go out meanwhile, when asked for). */
async function slowSite(ms: number, outcome: () => unknown): Promise<string[]> {
  const asked: string[] = [];
  const handlers = new Map<string, ControlHandler>([
    [
      'config.reload',
      () => {
        asked.push('config.reload');
        return new Promise((resolve, reject) =>
          setTimeout(() => {
            try {
              resolve(outcome());
            } catch (e) {
              reject(e as Error);
            }
          }, ms),
        );
      },
    ],
  ]);
  server = await ControlServer.listen(join(dir, 'control.sock'), handlers);
  return asked;
}

it('reports a reload that takes longer than 10 s as done, with a line while it waits', async () => {
  const asked = await slowSite(11_000, () => ({ applied: ['agent'], restartNeeded: ['http'] }));
  const r = await runMain(['config', 'reload', '--data', dir]);
  expect(asked).toEqual(['config.reload']);
  expect(r.err).toBe('tilstand: the site is still reloading config.json (10 s)…\n');
  expect(r.out).toBe('applied: agent\nchanged, and taking effect at the next start: http\n');
  expect(r.code).toBe(0);
}, 30_000);

it("still says a refused file as the site refused it (exit 2), heartbeats or not", async () => {
  await slowSite(300, () => {
    throw Object.assign(new Error('config agent.idleMsMin: expected an integer ≥ 0, got -5'), { kind: 'InvalidArgument' });
  });
  const r = await runMain(['config', 'reload', '--data', dir]);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/config agent\.idleMsMin: expected an integer ≥ 0, got -5/);
});
