// The systemd unit hands the site its per-site secrets (the HQ sync's S3 keys) from a root-only
// file outside the data directory, and the operations guide, the unit and the target opener
// agree on that file and on the variables' names.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTarget } from '../../core/sync/targets/open.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const source = (p: string) => readFileSync(join(ROOT, p), 'utf8');
const ENV_FILE = '/etc/tilstand/tilstand.env';
const KEYS = ['TILSTAND_HQ_ACCESS_KEY', 'TILSTAND_HQ_SECRET_KEY'];

describe('the site service and its HQ credentials', () => {
  it('the unit reads the secrets file when it exists, from outside the writable data directory', () => {
    const unit = source('build/tilstand.service');
    // '-': a site without HQ (no file) still starts.
    expect(unit).toMatch(new RegExp(`^EnvironmentFile=-${ENV_FILE}$`, 'm'));
    expect(/^ReadWritePaths=(.*)$/m.exec(unit)![1]!.split(' ')).not.toContain('/etc/tilstand');
    expect(unit).toMatch(/^ProtectSystem=strict$/m);
  });

  it('the operations guide names the same file and variables, and how a directory target becomes writable', () => {
    const doc = source('docs/operations.md');
    const section = doc.slice(doc.indexOf('## Connecting to headquarters'), doc.indexOf('## Logs'));
    expect(section).toContain(ENV_FILE);
    expect(section).toContain('install -m 0600');
    for (const k of KEYS) expect(section).toContain(k);
    expect(section).toContain('ReadWritePaths=/mnt/hq');
  });

  it('an S3 target takes its keys from exactly those variables, and without them names both', () => {
    const env = Object.fromEntries(KEYS.map((k) => [k, `value-of-${k}`]));
    expect(() => openTarget('s3://bucket/prefix?endpoint=http://127.0.0.1:9', { site: 's1', env })).not.toThrow();
    expect(() => openTarget('s3://bucket/prefix', { site: 's1', env: {} })).toThrow(new RegExp(KEYS.join('.*')));
  });
});
