// The site log rotates by size and keeps at most `keepFiles` old files.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
