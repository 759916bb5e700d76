// Entry point of one measurement child process: `node bin/run-ts.mjs bench/child.ts <task> <json>`,
// or, for the memory figure, its bundle `node dist/bench/child.mjs <task> <json>` (built by the
// harness with scripts/build-site.mjs: a site runs from a bundle, not through tsx).
// Prints one line `@@RESULT <json>` on stdout.
//
// Only the module of the task that runs is loaded (tasks.ts: table store, journal, embedded
// broker; site-tasks.ts: the site-level figures, which import core/site, core/sync, core/agents
// lazily), so no child — in particular the memory figure's baseline — pays for the others.

export {};

type TaskFn = (p: never) => unknown;
const fromTasks = (name: string) => async (): Promise<TaskFn> => (await import('./tasks.ts'))[name as 'memory'] as TaskFn;
const fromSiteTasks = (name: string) => async (): Promise<TaskFn> => (await import('./site-tasks.ts'))[name as 'visible'] as TaskFn;

const TASKS: Record<string, () => Promise<TaskFn>> = {
  'ingest-tilstand': fromTasks('ingestTilstand'),
  'ingest-ingestor': fromTasks('ingestIngestor'),
  'ingest-sqlite': fromTasks('ingestSqlite'),
  'json-parse': fromTasks('jsonParseOnly'),
  reads: fromTasks('reads'),
  'flush-compaction': fromTasks('flushCompaction'),
  tags: fromTasks('tags'),
  mqtt: fromTasks('mqtt'),
  memory: fromTasks('memory'),
  'mqtt-external': fromSiteTasks('mqttExternal'),
  visible: fromSiteTasks('visible'),
  flood: fromSiteTasks('flood'),
  sync: fromSiteTasks('syncTags'),
  replay: fromSiteTasks('replay'),
  agent: fromSiteTasks('agentRun'),
};

const [task, json] = process.argv.slice(2);
const load = task ? TASKS[task] : undefined;
if (!load) {
  console.error(`usage: child.ts <${Object.keys(TASKS).join('|')}> <json>`);
  process.exit(2);
}
const f = await load();
if (typeof f !== 'function') {
  console.error(`child.ts: task ${task} has no function`);
  process.exit(2);
}
const result = await f(JSON.parse(json ?? '{}') as never);
process.stdout.write(`@@RESULT ${JSON.stringify(result, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}\n`);
process.exit(0);
