// runDemoModules: a demo that cannot start all its modules leaves none running.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OperationsModule } from './operations.ts';
import { runDemoModules } from './run.ts';

let dir: string;
let server: net.Server;
let url: string;
let connections: number;
const sockets = new Set<net.Socket>();

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-demo-run-'));
  connections = 0;
  // A "broker" that takes each connection and drops it at once: every connect attempt is counted.
  server = net.createServer((s) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('runDemoModules', () => {
  it('closes the modules it made when a later one cannot start (no clients left reconnecting for ever)', async () => {
    const credentials = { operations: { username: 'operations', password: 'p' }, inventory: { username: 'inventory', password: 'p' }, commerce: { username: 'commerce', password: 'p' } };
    expect(() => runDemoModules({ url, site: 'demo', credentials: credentials as never, outboxDir: dir, stepMs: 60_000 })).toThrow(/no broker credentials for module 'procurement'/);
    // Let anything that was left behind try (reconnect_period 500 ms), then count for 1.2 s more.
    await new Promise((r) => setTimeout(r, 300));
    const before = connections;
    await new Promise((r) => setTimeout(r, 1_200));
    expect(connections - before).toBe(0); // was 6 or more: three modules reconnecting every 500 ms, keeping `tilstand demo` alive
  });

  it('runs the yard module when its credentials are there, and not in a directory made before it or when told not to', async () => {
    const seed = { operations: { username: 'operations', password: 'p' }, inventory: { username: 'inventory', password: 'p' }, commerce: { username: 'commerce', password: 'p' }, procurement: { username: 'procurement', password: 'p' } };
    const names = async (o: Partial<Parameters<typeof runDemoModules>[0]>) => {
      const demo = runDemoModules({ url, site: 'demo', credentials: seed, outboxDir: dir, stepMs: 60_000, ...o });
      await demo.stop();
      return demo.modules.map((m) => m.module);
    };
    expect(await names({})).toEqual(['operations', 'inventory', 'commerce', 'procurement']);
    expect(await names({ credentials: { ...seed, yard: { username: 'yard', password: 'p' } } })).toEqual(['operations', 'inventory', 'commerce', 'procurement', 'yard']);
    // A site without the yard_doors table says so: the module's events would only be dead letters there.
    expect(await names({ credentials: { ...seed, yard: { username: 'yard', password: 'p' } }, yard: false })).toEqual(['operations', 'inventory', 'commerce', 'procurement']);
    expect(() => runDemoModules({ url, site: 'demo', credentials: seed, outboxDir: dir, stepMs: 60_000, yard: true })).toThrow(/no broker credentials for module 'yard'/);
  });

  it('a module stopped before it started leaves its saved state as it was', async () => {
    const statePath = join(dir, 'operations.state.json');
    const saved = JSON.stringify({ format: 'tilstand-demo-module-1', seed: 1, rng: 42, state: { nextJob: 77, jobs: [], resources: [] } });
    writeFileSync(statePath, saved);
    const mod = new OperationsModule({ url, site: 'demo', username: 'operations', password: 'p', outboxPath: join(dir, 'operations.outbox.db'), seed: 1, stepMs: 60_000, statePath });
    await mod.stop();
    expect(readFileSync(statePath, 'utf8')).toBe(saved); // was the seed's 30 jobs, nextJob 31: the saved run lost
  });
});
