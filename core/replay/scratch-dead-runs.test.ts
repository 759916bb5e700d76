// A replay killed (kill -9, the OOM killer) leaves its scratch folder — the scratch warehouse and
// journal, `tilstand-replay-…`, and an archive's extracted copy, `tilstand-fixture-…` — in the
// scratch place, /dev/shm by default: memory, until a reboot. The next replay removes those of dead
// runs, never one of a live run, nor a folder kept on purpose (--keep-scratch) or not a run's.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoEvents } from './demo-events.ts';
import { exportFixture } from './export.ts';
import { defaultScratchParent, runReplay } from './replay.ts';
import { LiveSite, T0 } from './test-support.ts';

let site: LiveSite;
let work: string;
let fixture: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  site = new LiveSite();
  site.receive(new DemoEvents({ site: site.site, seed: 7 }).initial(T0 + 100));
  await site.advance(T0 + 20_000);
  site.close();
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-scratch-dead-runs-test-'));
  // An archive: its run extracts it into a scratch folder of its own too.
  fixture = join(work, 'fixture.tar');
  await exportFixture({ data: site.dir, tag: 'dead', atMs: T0 + 10_000, untilMs: T0 + 20_000, out: fixture });
}, 60_000);

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  site?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

/**
 * A replay in a child process that prints `scratch <dir>` once its scratch folder is made, then
 * either kills itself there (SIGKILL) or waits, alive, until its stdin closes. Resolves when it is
 * dead or has printed the line (bounded: 30 s).
 */
function childReplay(scratchParent: string, out: string, then: 'die' | 'wait', keepScratch = false): Promise<{ child: ChildProcess; scratch: string | undefined }> {
  const script = `
    import fs from 'node:fs';
    const { runReplay } = await import(${JSON.stringify(resolve(__dirname, 'replay.ts'))});
    await runReplay({ fixture: ${JSON.stringify(fixture)}, out: ${JSON.stringify(out)}, scratchParent: ${JSON.stringify(scratchParent)}, keepScratch: ${keepScratch},
      onScratch: (dir) => {
        fs.writeSync(1, 'scratch ' + dir + '\\n');
        if (${JSON.stringify(then)} === 'die') process.kill(process.pid, 'SIGKILL');
        try { fs.readSync(0, Buffer.alloc(1)); } catch {}
      } });
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((done, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`child replay: no scratch line in 30 s (${out})`)), 30_000);
    const scratchOf = () => /^scratch (.+)$/m.exec(out)?.[1];
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (then === 'wait' && scratchOf() !== undefined) {
        clearTimeout(timer);
        done({ child, scratch: scratchOf() });
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      done({ child, scratch: scratchOf() });
    });
  });
}

const replayIn = (scratchParent: string, out: string) => runReplay({ fixture, out: join(work, out), scratchParent });

describe('scratch folders of replays that died', () => {
  it('are removed by the next replay; a kept one and a folder that is not a run’s stay', async () => {
    const parent = join(work, 'scratch-dead');
    mkdirSync(parent);
    const kept = await childReplay(parent, join(work, 'run-kept'), 'die', true);
    expect(kept.child.signalCode).toBe('SIGKILL');
    const killed = await childReplay(parent, join(work, 'run-killed'), 'die');
    expect(killed.child.signalCode).toBe('SIGKILL');
    mkdirSync(join(parent, 'tilstand-replay-by-hand'));
    // The kept run's extracted fixture went with the killed run's start; the killed run's folders are there.
    const left = readdirSync(parent);
    expect(left.filter((n) => n.startsWith('tilstand-fixture-'))).toHaveLength(1);
    expect(left).toHaveLength(4);
    expect(left).toContain(killed.scratch!.slice(parent.length + 1));
    await replayIn(parent, 'run-after');
    // Was: the killed run's scratch warehouse and extracted fixture stayed for good.
    expect(readdirSync(parent).sort()).toEqual([kept.scratch!.slice(parent.length + 1), 'tilstand-replay-by-hand'].sort());
  }, 90_000);

  it('are not those of a live run', async () => {
    const parent = join(work, 'scratch-live');
    mkdirSync(parent);
    const live = await childReplay(parent, join(work, 'run-live'), 'wait');
    expect(live.scratch).toBeDefined();
    const before = readdirSync(parent).sort();
    expect(before).toHaveLength(2);
    await replayIn(parent, 'run-beside');
    expect(readdirSync(parent).sort()).toEqual(before);
    // Once it is dead, the next run removes them.
    live.child.kill('SIGKILL');
    await new Promise((done) => (live.child.exitCode !== null || live.child.signalCode !== null ? done(undefined) : live.child.on('exit', done)));
    await replayIn(parent, 'run-after-live');
    expect(readdirSync(parent)).toEqual([]);
  }, 90_000);
});
