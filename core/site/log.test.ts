// The site log rotates by size and keeps at most `keepFiles` old files.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { siteLogger } from './log.ts';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('rotates site.log by size and keeps N old files, newest in site.log.1', () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-log-'));
  const seen: string[] = [];
  const log = siteLogger(dir, (l) => seen.push(l), { fileBytesMax: 200, keepFiles: 3 });
  for (let i = 0; i < 40; i++) log(`line ${String(i).padStart(3, '0')} ${'x'.repeat(40)}`);
  expect(seen).toHaveLength(40);
  expect(readdirSync(dir).sort()).toEqual(['site.log', 'site.log.1', 'site.log.2', 'site.log.3']);
  for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f)).length).toBeLessThanOrEqual(200);
  expect(readFileSync(join(dir, 'site.log'), 'utf8')).toContain('line 039');
  const one = readFileSync(join(dir, 'site.log.1'), 'utf8');
  const two = readFileSync(join(dir, 'site.log.2'), 'utf8');
  expect(Number(/line (\d+)/.exec(one)![1])).toBeGreaterThan(Number(/line (\d+)/.exec(two)![1]));
});

it('writes site.log again after it could not be written for a while (a full disk freed), saying how many lines only the terminal got', () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-log-'));
  const seen: string[] = [];
  let t = Date.parse('2026-12-06T10:00:00Z');
  const log = siteLogger(dir, (l) => seen.push(l), { now: () => t });
  log('before');
  // The file cannot be written (here: a folder in its place; on a site, ENOSPC or EIO).
  rmSync(join(dir, 'site.log'));
  mkdirSync(join(dir, 'site.log'));
  log('lost 1');
  t += 1_000;
  log('lost 2');
  expect(seen.filter((l) => l.includes('cannot be written'))).toHaveLength(1);
  // Space is free again; a minute on, the next line goes to the file, after a line on what it missed.
  rmSync(join(dir, 'site.log'), { recursive: true });
  t += 60_000;
  log('after');
  const lines = readFileSync(join(dir, 'site.log'), 'utf8').trimEnd().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/could not be written from 2026-12-06T10:00:00\.000Z: 2 lines went to the terminal only/);
  expect(lines[1]).toMatch(/^2026-12-06T10:01:01\.000Z after$/);
});
