// The control socket's bounds on what a request may carry: a line longer than requestBytesMax is
// refused however its bytes arrive, and the site's handlers refuse arguments out of range
// (journal positions below 0, a dead-letter list longer than DEAD_LETTER_LIST_MAX) naming them.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEAD_LETTER_LIST_MAX } from '../ingest/ingestor.ts';
import { ControlServer, controlRequest, type ControlHandler } from './control.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-control-limits-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `text` in one write and collects every answer line until the server closes (at most 5 s). */
function exchange(path: string, text: string): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let got = '';
    s.setEncoding('utf8');
    s.once('connect', () => s.write(text));
    s.on('data', (c: string) => {
      got += c;
      // Both answers, or the refusal: enough to decide, without waiting for the idle limit.
      if (got.split('\n').filter(Boolean).length >= 2 || got.includes('request longer than')) s.end();
    });
    s.once('close', () => resolve(got.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown)));
    s.once('error', reject);
    setTimeout(() => (s.destroy(), reject(new Error(`no answer within 5 s (got ${JSON.stringify(got)})`))), 5_000).unref();
  });
}

describe('control socket request size', () => {
  it('refuses a line longer than requestBytesMax that arrives together with its newline', async () => {
    const path = join(dir, 'control.sock');
    const server = await ControlServer.listen(path, new Map<string, ControlHandler>([['echo', (a) => a.pad]]), { requestBytesMax: 200 });
    closers.push(() => server.close());
    const long = `${JSON.stringify({ id: 1, op: 'echo', args: { pad: 'x'.repeat(300) } })}\n`;
    const short = `${JSON.stringify({ id: 2, op: 'echo', args: { pad: 'y' } })}\n`;
    const answers = await exchange(path, long + short);
    expect(answers[0]).toEqual({ id: null, ok: false, error: { kind: 'InvalidArgument', message: 'request longer than 200 bytes' } });
    expect(answers).toHaveLength(1);
  });

  it('still answers lines within the limit sent together', async () => {
    const path = join(dir, 'control.sock');
    const server = await ControlServer.listen(path, new Map<string, ControlHandler>([['echo', (a) => a.pad]]), { requestBytesMax: 200 });
    closers.push(() => server.close());
    const line = (id: number) => `${JSON.stringify({ id, op: 'echo', args: { pad: 'x'.repeat(100) } })}\n`;
    expect(await exchange(path, line(1) + line(2))).toEqual([
      { id: 1, ok: true, value: 'x'.repeat(100) },
      { id: 2, ok: true, value: 'x'.repeat(100) },
    ]);
  });
});

describe('control socket request size in bytes', () => {
  // The limit and its refusal say bytes: a line of two-byte characters (ø) is measured in bytes,
  // not in UTF-16 units (it was: 200 "bytes" let a line of nearly 400 through).
  const echo = () => new Map<string, ControlHandler>([['echo', (a) => a.pad]]);
  /** A request line of exactly `bytes` bytes (its newline not counted), padded with ø (2 bytes) and one x when odd. */
  const lineOf = (id: number, bytes: number): string => {
    const frame = Buffer.byteLength(JSON.stringify({ id, op: 'echo', args: { pad: '' } }));
    const pad = 'ø'.repeat(Math.floor((bytes - frame) / 2)) + ((bytes - frame) % 2 === 1 ? 'x' : '');
    const line = JSON.stringify({ id, op: 'echo', args: { pad } });
    expect(Buffer.byteLength(line)).toBe(bytes);
    return line;
  };

  it('refuses a line of multi-byte characters whose bytes are over the limit, though its characters are not', async () => {
    const path = join(dir, 'control.sock');
    const server = await ControlServer.listen(path, echo(), { requestBytesMax: 200 });
    closers.push(() => server.close());
    const line = lineOf(1, 201);
    expect(line.length).toBeLessThan(200);
    expect(await exchange(path, `${line}\n`)).toEqual([{ id: null, ok: false, error: { kind: 'InvalidArgument', message: 'request longer than 200 bytes' } }]);
  });

  it('answers a line of exactly the limit in bytes, a character split between two writes included', async () => {
    const path = join(dir, 'control.sock');
    const server = await ControlServer.listen(path, echo(), { requestBytesMax: 200 });
    closers.push(() => server.close());
    const line = lineOf(1, 200);
    const bytes = Buffer.from(`${line}\n${lineOf(2, 120)}\n`);
    // Cut inside the first ø: its two bytes come in two writes.
    const cut = bytes.indexOf(Buffer.from('ø')) + 1;
    const answers = await new Promise<unknown[]>((resolve, reject) => {
      const s = connect(path);
      let got = '';
      s.setEncoding('utf8');
      s.once('connect', () => {
        s.write(bytes.subarray(0, cut));
        setTimeout(() => s.write(bytes.subarray(cut)), 20);
      });
      s.on('data', (c: string) => {
        got += c;
        if (got.split('\n').filter(Boolean).length >= 2) s.end();
      });
      s.once('close', () => resolve(got.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown)));
      s.once('error', reject);
      setTimeout(() => (s.destroy(), reject(new Error(`no answer within 5 s (got ${JSON.stringify(got)})`))), 5_000).unref();
    });
    expect(answers).toEqual([
      { id: 1, ok: true, value: (JSON.parse(line) as { args: { pad: string } }).args.pad },
      { id: 2, ok: true, value: (JSON.parse(lineOf(2, 120)) as { args: { pad: string } }).args.pad },
    ]);
  });

  it('refuses a line still waiting for its newline once its bytes pass the limit', async () => {
    const path = join(dir, 'control.sock');
    const server = await ControlServer.listen(path, echo(), { requestBytesMax: 200 });
    closers.push(() => server.close());
    // 120 characters, 240 bytes, no newline yet.
    expect(await exchange(path, 'ø'.repeat(120))).toEqual([{ id: null, ok: false, error: { kind: 'InvalidArgument', message: 'request longer than 200 bytes' } }]);
  });
});

describe('control arguments of the dead-letter ops', () => {
  it('refuses negative journal positions and a list limit out of range, naming the argument', async () => {
    const data = join(dir, 'site');
    await initDataDir({ data, site: 'cl' });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    const socket = join(data, 'control.sock');
    const refusal = (op: string, args: Record<string, unknown>) => controlRequest(socket, op, args).then(() => undefined, (e: Error & { kind?: string }) => ({ kind: e.kind, message: e.message }));
    expect(await refusal('deadletters.replay', { ids: [-1] })).toEqual({ kind: 'InvalidArgument', message: 'ids: expected an array of journal positions' });
    expect(await refusal('deadletters.dismiss', { ids: [-3], user: 'x', pin: '1' })).toEqual({ kind: 'InvalidArgument', message: 'ids: expected an array of journal positions' });
    const limitError = (got: string) => ({ kind: 'InvalidArgument', message: `limit: expected an integer from 1 to ${DEAD_LETTER_LIST_MAX}, got ${got}` });
    expect(await refusal('deadletters.list', { limit: DEAD_LETTER_LIST_MAX + 1 })).toEqual(limitError(String(DEAD_LETTER_LIST_MAX + 1)));
    expect(await refusal('deadletters.list', { limit: 0 })).toEqual(limitError('0'));
    expect(await refusal('deadletters.list', { limit: 'many' })).toEqual(limitError('"many"'));
    expect(await controlRequest(socket, 'deadletters.list', { limit: DEAD_LETTER_LIST_MAX })).toEqual([]);
    expect(await controlRequest(socket, 'deadletters.list', {})).toEqual([]);
  }, 60_000);
});
