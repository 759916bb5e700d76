// `tilstand start`, for now: the site runtime (ingest, agents, inbox, sync, the UI server) is not
// built yet, so this prints a notice saying so and what exists, and exits 0. It must never fail:
// every argument is accepted and every look at the data directory is best effort.
// Another piece of work replaces this file with the real runtime.

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Catalog } from '../../lsm/index.ts';

/** The notice's lines; `argv` is everything after `start`. */
export function startNotice(argv: readonly string[]): string[] {
  let data: string | undefined;
  let demo = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--demo') demo = true;
    else if (a === '--data' && i + 1 < argv.length) data = argv[++i];
    else if (a.startsWith('--data=')) data = a.slice('--data='.length);
  }
  const lines = [
    'tilstand start: the site runtime is not built yet — nothing was started.',
    '  (MQTT ingest, the work-queue agent, the approval inbox, HQ sync and the UI server come later.)',
  ];
  if (demo) lines.push('  --demo: there is no demo site yet.');
  lines.push('', 'What exists now:');
  lines.push('  tilstand table …    the table store (Paimon format): create, put, scan, get, snapshots, tags,');
  lines.push('                      compact, expire, inspect, list, drop — see `tilstand table --help`');
  if (data !== undefined) {
    lines.push('', ...describeDataDir(resolve(data)));
  }
  return lines;
}

function describeDataDir(dir: string): string[] {
  try {
    if (!existsSync(dir)) return [`Data directory ${dir}: does not exist yet.`];
    const warehouse = join(dir, 'warehouse');
    if (!existsSync(warehouse)) return [`Data directory ${dir}: no warehouse/ yet.`];
    const catalog = new Catalog(warehouse);
    const dbs = catalog.listDatabases();
    const lines = [`Data directory ${dir}: warehouse ${warehouse} with ${dbs.length} database${dbs.length === 1 ? '' : 's'}.`];
    for (const db of dbs) {
      let tables: string[] = [];
      try {
        tables = catalog.listTables(db);
      } catch {
        // best effort
      }
      lines.push(`  ${db}: ${tables.length === 0 ? '(no tables)' : tables.join(', ')}`);
    }
    lines.push(`  read them with: tilstand table scan <db>.<table> --warehouse ${warehouse}`);
    return lines;
  } catch (e) {
    return [`Data directory ${dir}: could not be read (${(e as Error).message}).`];
  }
}
