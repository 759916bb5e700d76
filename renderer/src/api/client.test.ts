// The renderer's client: every call carries the page's input age to the site (core/site/api.ts
// InputAge), through the Electron bridge as its third argument and over HTTP as a header. That
// the names it keeps of its own match the site's is test/contracts/renderer-site.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient, INPUT_AGE_HEADER } from './client.ts';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('createClient', () => {
  it("keeps an error's kind and, for an idle sign-out, its limit", async () => {
    const errors = [
      { kind: 'unauthenticated', message: 'Kari was signed out', idleMs: 600_000 },
      { kind: 'forbidden', message: 'no' },
    ] as const;
    let i = 0;
    const api = createClient(() => null, { call: async () => ({ ok: false, error: errors[i++]! }), subscribe: () => () => undefined });
    await expect(api.me({})).rejects.toMatchObject({ kind: 'unauthenticated', message: 'Kari was signed out', idleMs: 600_000 });
    await expect(api.status({})).rejects.toMatchObject({ kind: 'forbidden', idleMs: undefined });
  });

  it("hands the bridge the page's input age as it is at each call", async () => {
    const seen: unknown[][] = [];
    let age: number | null = null;
    const api = createClient(() => age, {
      call: async (method, request, inputAge) => {
        seen.push([method, request, inputAge]);
        return { ok: true, value: null };
      },
      subscribe: () => () => undefined,
    });
    await api.me({});
    age = 1500;
    await api.status({});
    expect(seen).toEqual([
      ['me', {}, null],
      ['status', {}, 1500],
    ]);
  });

  it("sends it over HTTP as the site's header: the number, or 'none' before any input", async () => {
    const headers: Array<Record<string, string>> = [];
    vi.stubGlobal('window', {});
    vi.stubGlobal('fetch', async (_url: string, init: { headers: Record<string, string> }) => {
      headers.push(init.headers);
      return { status: 200, json: async () => ({ ok: true, value: null }) };
    });
    let age: number | null = null;
    const api = createClient(() => age);
    await api.me({});
    age = 42;
    await api.status({});
    expect(headers.map((h) => h[INPUT_AGE_HEADER])).toEqual(['none', '42']);
  });

  it('says when the events flow again after the socket broke off (what was pushed meanwhile is lost), not when it first opens', () => {
    vi.useFakeTimers();
    try {
      const sockets: FakeSocket[] = [];
      class FakeSocket {
        onopen: (() => void) | null = null;
        onmessage: ((m: { data: string }) => void) | null = null;
        onclose: ((e: { code: number }) => void) | null = null;
        constructor(readonly url: string) {
          sockets.push(this);
        }
        close() {}
      }
      vi.stubGlobal('window', { dispatchEvent: () => true });
      vi.stubGlobal('location', { protocol: 'http:', host: '127.0.0.1:8080' });
      vi.stubGlobal('WebSocket', FakeSocket);
      const api = createClient(() => null);
      const events: unknown[] = [];
      let resumed = 0;
      const stop = api.subscribe((e) => events.push(e), () => resumed++);
      expect(sockets).toHaveLength(1);
      sockets[0]!.onopen!();
      sockets[0]!.onmessage!({ data: JSON.stringify({ type: 'proposals', changed: ['P-1'] }) });
      expect(resumed).toBe(0); // the first socket: the page has just read what it shows
      sockets[0]!.onclose!({ code: 1006 }); // the site restarted, a network blip, a slow reader cut off
      vi.advanceTimersByTime(500);
      expect(sockets).toHaveLength(2);
      sockets[1]!.onclose!({ code: 1006 }); // refused while the site starts
      vi.advanceTimersByTime(1000);
      expect(sockets).toHaveLength(3);
      expect(resumed).toBe(0);
      sockets[2]!.onopen!();
      expect(resumed).toBe(1);
      expect(events).toEqual([{ type: 'proposals', changed: ['P-1'] }]);
      stop();
    } finally {
      vi.useRealTimers();
    }
  });
  it('opens a new socket when the open one stays silent past the site quiet limit (half-open), and reads what it missed', () => {
    vi.useFakeTimers();
    try {
      const sockets: FakeSocket[] = [];
      class FakeSocket {
        onopen: (() => void) | null = null;
        onmessage: ((m: { data: string }) => void) | null = null;
        onclose: ((e: { code: number }) => void) | null = null;
        closed = false;
        constructor(readonly url: string) {
          sockets.push(this);
        }
        close() {
          this.closed = true; // a half-open socket's close event may come minutes later, or never
        }
      }
      vi.stubGlobal('window', { dispatchEvent: () => true });
      vi.stubGlobal('location', { protocol: 'http:', host: '127.0.0.1:8080' });
      vi.stubGlobal('WebSocket', FakeSocket);
      const api = createClient(() => null);
      const events: unknown[] = [];
      let resumed = 0;
      const stop = api.subscribe((e) => events.push(e), () => resumed++);
      sockets[0]!.onopen!();
      const status = (statusEveryMs: number) => ({ data: JSON.stringify({ type: 'status', status: { statusEveryMs } }) });
      // Statuses every 5 s: the socket lives.
      for (let i = 0; i < 10; i++) {
        vi.advanceTimersByTime(5_000);
        sockets[0]!.onmessage!(status(5_000));
      }
      expect(sockets).toHaveLength(1);
      // Then nothing (a network blip left it half-open): not yet at 14 s...
      vi.advanceTimersByTime(14_000);
      expect(sockets).toHaveLength(1);
      // ...a new one by 3 intervals (15 s) and a check, the old one closed and deaf.
      vi.advanceTimersByTime(2_000);
      expect(sockets).toHaveLength(2);
      expect(sockets[0]!.closed).toBe(true);
      expect(sockets[0]!.onmessage).toBeNull();
      expect(sockets[0]!.onclose).toBeNull();
      expect(resumed).toBe(0);
      sockets[1]!.onopen!();
      expect(resumed).toBe(1); // what was pushed meanwhile is read again
      // A site that says it pushes every 20 s is given 60 s.
      sockets[1]!.onmessage!(status(20_000));
      vi.advanceTimersByTime(55_000);
      expect(sockets).toHaveLength(2);
      vi.advanceTimersByTime(7_000);
      expect(sockets).toHaveLength(3);
      // A socket still connecting (a site stopped) is left to connect: one at a time.
      vi.advanceTimersByTime(120_000);
      expect(sockets).toHaveLength(3);
      stop();
      expect(sockets[2]!.closed).toBe(true);
      vi.advanceTimersByTime(120_000);
      expect(sockets).toHaveLength(3);
      expect(events).toHaveLength(11);
    } finally {
      vi.useRealTimers();
    }
  });
});
