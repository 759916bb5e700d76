// Entry point of one measurement child process: `node bin/run-ts.mjs bench/child.ts <task> <json>`.
// Prints one line `@@RESULT <json>` on stdout.
import * as tasks from './tasks.ts';

const TASKS: Record<string, (p: never) => unknown> = {
  'ingest-tilstand': tasks.ingestTilstand,
  'ingest-ingestor': tasks.ingestIngestor,
  'ingest-sqlite': tasks.ingestSqlite,
  'json-parse': tasks.jsonParseOnly,
  reads: tasks.reads,
  'flush-compaction': tasks.flushCompaction,
  tags: tasks.tags,
  mqtt: tasks.mqtt,
  memory: tasks.memory,
};

const [task, json] = process.argv.slice(2);
const f = task ? TASKS[task] : undefined;
if (!f) {
  console.error(`usage: child.ts <${Object.keys(TASKS).join('|')}> <json>`);
  process.exit(2);
}
const result = await f(JSON.parse(json ?? '{}') as never);
process.stdout.write(`@@RESULT ${JSON.stringify(result, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}\n`);
process.exit(0);
