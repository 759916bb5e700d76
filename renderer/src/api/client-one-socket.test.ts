// The events socket's watchdog (client.ts, SOCKET_SILENT_*) replaces an open socket silent for
// three status intervals. A socket that closed after such a silence (a laptop woken after sleep, a
// site hung then stopped, a hidden tab whose timers run once a minute so that the close's
// reconnect and the watchdog's check fall due together) was still taken for open between its close
// and the reconnect: the watchdog opened one and the reconnect another, two sockets at once, each
// event handed on twice, the watchdog's one never closed (not even on unsubscribe) and counted by
// the site against the user's sockets (core/site ui-server EVENT_SOCKETS_PER_USER_MAX).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from './client.ts';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('the events socket after a close that follows a long silence', () => {
  it('is reopened once: one socket at a time, each event handed on once', () => {
    vi.useFakeTimers();
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
        this.closed = true;
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
    // Silent (asleep, hung) for 14.9 s, then closed: the reconnect is due 0.5 s later, the
    // watchdog's check (1 s apart) at 15 s.
    vi.advanceTimersByTime(14_900);
    sockets[0]!.closed = true; // it is closed: its close event comes
    sockets[0]!.onclose!({ code: 1006 });
    vi.advanceTimersByTime(3_000);
    const live = () => sockets.filter((s) => !s.closed && s.onmessage !== null);
    expect(live()).toHaveLength(1);
    expect(sockets).toHaveLength(2);
    live()[0]!.onopen!();
    expect(resumed).toBe(1);
    for (const s of live()) s.onmessage!({ data: JSON.stringify({ type: 'proposals', changed: ['P-1'] }) });
    expect(events).toEqual([{ type: 'proposals', changed: ['P-1'] }]);
    stop();
    expect(live()).toHaveLength(0);
  });
});
