// `tilstand status` names where the open dead letters come from and why: their count alone sent
// an operator to `deadletters list` to find out which module sends what the site refuses. Grouped
// by topic and reason, the largest groups first; a running site's and a stopped one's alike.
import mqtt from 'mqtt';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatStatus, statusFromDirectory, type SiteStatus } from './status.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { runMain as run } from './cli/test-support.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-status-letters-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** How many letters `deadletters list` shows of: the stock group, stock's with another reason, the counts stream's. */
async function groupListed(data: string): Promise<number[]> {
  const count = async (...filter: string[]) => {
    const r = await run(['deadletters', 'list', '--data', data, '--json', ...filter]);
    expect(r.code, r.err).toBe(0);
    return (JSON.parse(r.out) as unknown[]).length;
  };
  return [
    await count('--topic', 'tilstand/north/events/inventory/stock', '--reason', 'bad_json'),
    await count('--topic', 'tilstand/north/events/inventory/stock', '--reason', 'no_binding'),
    await count('--topic', 'tilstand/north/events/inventory/counts'),
  ];
}

const letterLines = (out: string): string[] => {
  const lines = out.split('\n');
  const at = lines.findIndex((l) => l.startsWith('dead letters: '));
  return lines.slice(at, at + 1 + lines.slice(at + 1).findIndex((l) => !l.startsWith('  ')));
};

describe('tilstand status: the open dead letters by topic and reason', () => {
  it('lists the groups, the largest first, of a running site and of a stopped one', { timeout: 60_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    const pw = /\): (\S+)$/m.exec((await run(['modules', 'password', '--module', 'inventory', '--data', data])).out)![1]!;
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      const c = await mqtt.connectAsync(site.mqttUrl, { username: 'inventory', password: pw, clientId: 'module-north-inventory', protocolVersion: 4, reconnectPeriod: 0 });
      try {
        for (let k = 0; k < 3; k++) await c.publishAsync('tilstand/north/events/inventory/stock', `{"not json ${k}`, { qos: 1 });
        const event = (seq: number) => JSON.stringify({ op: 'u', before: null, after: { item: 'A', location: 'L', qty: 1 }, source: { module: 'inventory', stream: 'counts', seq }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } });
        await c.publishAsync('tilstand/north/events/inventory/counts', event(1), { qos: 1 });
      } finally {
        await c.endAsync();
      }
      site.ingestor.commitAll();
      const running = await run(['status', '--data', data]);
      expect(running.code).toBe(0);
      expect(letterLines(running.out)).toEqual([
        'dead letters: 4 open (tilstand deadletters list)',
        '  3 bad_json from tilstand/north/events/inventory/stock',
        '  1 no_binding from tilstand/north/events/inventory/counts',
      ]);
      const json = JSON.parse((await run(['status', '--data', data, '--json'])).out) as SiteStatus;
      expect(json.deadLettersOpenBy).toEqual([
        { topic: 'tilstand/north/events/inventory/stock', reason: 'bad_json', count: 3 },
        { topic: 'tilstand/north/events/inventory/counts', reason: 'no_binding', count: 1 },
      ]);
      expect(await groupListed(data)).toEqual([3, 0, 1]);
    } finally {
      await site.stop();
    }
    expect(await groupListed(data)).toEqual([3, 0, 1]);
    const refused = await run(['deadletters', 'list', '--data', data, '--reason', 'garbage']);
    expect([refused.code, refused.err]).toEqual([2, expect.stringMatching(/^tilstand: option '--reason': expected one of too_large, .*, got 'garbage'\n$/)]);
    const stopped = await run(['status', '--data', data]);
    expect(letterLines(stopped.out)).toEqual([
      'dead letters: 4 open (tilstand deadletters list)',
      '  3 bad_json from tilstand/north/events/inventory/stock',
      '  1 no_binding from tilstand/north/events/inventory/counts',
    ]);
  });

  it('shows five groups and counts the rest; none when no letter is open', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    const base = statusFromDirectory(data);
    const groups = Array.from({ length: 7 }, (_, k) => ({ topic: `tilstand/north/events/m${k}/s`, reason: 'bad_json', count: 10 - k }));
    const lines = formatStatus({ ...base, deadLettersOpen: 63, deadLettersOpenBy: groups });
    expect(letterLines(lines.join('\n'))).toEqual([
      'dead letters: 63 open (tilstand deadletters list)',
      '  10 bad_json from tilstand/north/events/m0/s',
      '  9 bad_json from tilstand/north/events/m1/s',
      '  8 bad_json from tilstand/north/events/m2/s',
      '  7 bad_json from tilstand/north/events/m3/s',
      '  6 bad_json from tilstand/north/events/m4/s',
      '  and 9 more from 2 other topics or reasons',
    ]);
    expect(letterLines(formatStatus(base).join('\n'))).toEqual(['dead letters: 0 open']);
  });
});
