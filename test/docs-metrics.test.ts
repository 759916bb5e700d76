// Every metric docs/operations.md tells the operator to alert on is one a site's /metrics serves:
// a renamed metric would leave a site's monitoring watching a name that never comes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { initDataDir } from '../core/site/init.ts';
import { Site } from '../core/site/site.ts';

const ROOT = join(import.meta.dirname, '..');
const dirs: string[] = [];
const sites: Site[] = [];
afterEach(async () => {
  for (const s of sites.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the metrics docs/operations.md names', () => {
  it('are each declared by a running site\'s /metrics (HELP or TYPE line)', async () => {
    const doc = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    // Metric names in code spans; `tilstand_sync_*` is a family, the cookie name is no metric.
    const named = new Set([...doc.matchAll(/`(tilstand_[a-z_]*[a-z])[`{]/g)].map((m) => m[1]!));
    named.delete('tilstand_session');
    expect(named.size).toBeGreaterThan(10);

    const dir = mkdtempSync(join(tmpdir(), 'tilstand-docs-metrics-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    // With an HQ target, so the sync family is served too, and the agent's timers as a site runs
    // them (the inbox's age is served only while they keep it current).
    await initDataDir({ data, site: 'docs', config: (c) => ({ ...c, hq: { target: join(dir, 'hq') } }) });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, syncIntervalMs: 60_000 });
    sites.push(site);
    const declared = new Set([...site.metrics().matchAll(/^# (?:HELP|TYPE) (\S+)/gm)].map((m) => m[1]!));
    expect([...named].filter((n) => !declared.has(n))).toEqual([]);
    expect([...declared].some((n) => n.startsWith('tilstand_sync_'))).toBe(true);
  }, 60_000);
});
