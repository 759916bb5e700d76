// The control socket's connection limit: a connection over it is told so and closed. A client gone
// before that refusal is written (a CLI killed, a monitoring script's timeout) made the write fail
// with EPIPE on a socket nobody listened to for errors: an uncaught exception, which ends the site.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ControlServer, controlRequest } from './control.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-control-conns-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a control connection over the limit', () => {
  it('whose client is gone before the refusal is written does not end the process', async () => {
    const path = join(dir, 'control.sock');
    const cs = await ControlServer.listen(path, new Map([['status', () => 'running']]), { connectionsMax: 1 });
    const uncaught: Error[] = [];
    const onUncaught = (e: Error) => void uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    const held = connect(path);
    try {
      await new Promise<void>((resolve, reject) => {
        held.once('connect', () => resolve());
        held.once('error', reject);
      });
      // Connections that close as soon as they are made, until one refusal met a closed client
      // (it takes a few on a loaded PC); at most 300 and 10 s.
      const deadline = Date.now() + 10_000;
      for (let i = 0; i < 300 && Date.now() < deadline && uncaught.length === 0; i++) {
        await new Promise<void>((resolve) => {
          const s = connect(path);
          s.on('error', () => resolve());
          s.once('connect', () => {
            s.destroy();
            resolve();
          });
        });
      }
      await new Promise((r) => setTimeout(r, 200));
      expect(uncaught.map((e) => e.message)).toEqual([]);
      held.destroy();
      // The one connection allowed is free again: the server still answers.
      await new Promise((r) => setTimeout(r, 50));
      await expect(controlRequest(path, 'status', {}, 5_000)).resolves.toBe('running');
    } finally {
      process.off('uncaughtException', onUncaught);
      held.destroy();
      await cs.close();
    }
  }, 30_000);
});
