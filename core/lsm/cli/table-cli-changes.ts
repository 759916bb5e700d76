// `tilstand table diff | follow | rollback`: reading changes, following a table under a named
// consumer, and rolling back (core/lsm/incremental.ts, rollback.ts; CHANGELOG-DESIGN.md).
// The commands have the shape of table-cli.ts's command table and are merged into it there
// (`...CHANGES_COMMANDS`); they share its dispatcher, flag parsing, exit codes and output rules.
//
//   diff      JSON lines, one per change: the row's columns plus "_kind" (+I, -U, +U, -D) — the
//             same shape `put` reads, so a diff can be replayed into another table.
//   follow    prints the changes since the consumer's position, snapshot by snapshot, and stores
//             the new position after each snapshot's lines are written; `--once` exits when caught
//             up, otherwise it polls every second until SIGINT/SIGTERM.
//   rollback  holds the writer for the call (also past a damaged latest snapshot: Table.rollbackTo);
//             prints a JSON summary.

import type { Catalog } from '../catalog.ts';
import type { Change } from '../incremental.ts';
import type { Table } from '../table.ts';
import { EXIT, usageError, type FlagSpecs, type ParsedArgs } from './args.ts';
import type { CliIO, LineWriter } from './output.ts';
import { parseIdentifier } from '../catalog.ts';
import { checkConsumerId } from '../consumer.ts';
import { rowToJson } from './values.ts';

/** Structurally the same as table-cli.ts's Context. */
export interface ChangesContext {
  args: ParsedArgs;
  io: CliIO;
  out: LineWriter;
  catalog: Catalog;
}

/** Structurally the same as table-cli.ts's Command. */
export interface ChangesCommand {
  name: string;
  synopsis: string;
  summary: string;
  flags: FlagSpecs;
  positionals: string[];
  run(ctx: ChangesContext): Promise<number>;
}

const WAREHOUSE: FlagSpecs = { warehouse: { type: 'string', value: '<dir>' } };
const MODES = ['auto', 'delta', 'changelog', 'diff'] as const;

function openTable(ctx: ChangesContext): Table {
  let id;
  try {
    id = parseIdentifier(ctx.args.positionals[0]!);
  } catch (e) {
    throw usageError((e as Error).message);
  }
  return ctx.catalog.getTable(id);
}

function ref(text: string, flag: string): string {
  const t = text.trim();
  if (t.length === 0) throw usageError(`option '--${flag}': expected a snapshot id or a tag name`);
  return t;
}

function changeLine(table: Table, c: Change): string {
  return JSON.stringify({ _kind: c.kind, ...rowToJson(table.schema.fields, c.row) });
}

export async function diffCommand(ctx: ChangesContext): Promise<number> {
  const table = openTable(ctx);
  const mode = ctx.args.string('mode') ?? 'auto';
  if (!(MODES as readonly string[]).includes(mode)) throw usageError(`option '--mode': expected one of ${MODES.join(', ')}, got '${mode}'`);
  const to = ctx.args.string('to');
  const changes = table.changes({
    from: ref(ctx.args.required('from'), 'from'),
    ...(to === undefined ? {} : { to: ref(to, 'to') }),
    mode: mode as (typeof MODES)[number],
  });
  for (const c of changes) await ctx.out.line(changeLine(table, c));
  return EXIT.ok;
}

/** Options of the follow loop; tests pass their own stop signal and interval. */
export interface FollowLoopOptions {
  once: boolean;
  intervalMs: number;
  signal?: AbortSignal;
}

export async function followLoop(ctx: ChangesContext, o: FollowLoopOptions): Promise<number> {
  const table = openTable(ctx);
  const fromText = ctx.args.string('from');
  let from: number | 'latest' | 'earliest' | undefined;
  if (fromText !== undefined) {
    if (fromText === 'latest' || fromText === 'earliest') from = fromText;
    else if (/^\d+$/.test(fromText) && Number(fromText) >= 1) from = Number(fromText);
    else throw usageError(`option '--from': expected earliest, latest or a snapshot id, got '${fromText}'`);
  }
  const mode = ctx.args.string('mode') ?? 'auto';
  if (mode !== 'auto' && mode !== 'delta' && mode !== 'changelog') throw usageError(`option '--mode': expected auto, delta or changelog, got '${mode}'`);
  const consumer = ctx.args.required('consumer');
  try {
    checkConsumerId(consumer);
  } catch (e) {
    throw usageError(`option '--consumer': ${(e as Error).message}`);
  }
  const follower = table.follow({ consumer, ...(from === undefined ? {} : { from }), mode });
  for (;;) {
    for (let batch = follower.next(); batch; batch = follower.next()) {
      for (const c of batch) await ctx.out.line(changeLine(table, c));
      await ctx.out.flush(); // written out before the position moves past it
      follower.ack();
    }
    if (o.once || o.signal?.aborted) return EXIT.ok;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, o.intervalMs);
      o.signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
    if (o.signal?.aborted) return EXIT.ok;
  }
}

export async function followCommand(ctx: ChangesContext): Promise<number> {
  const once = ctx.args.boolean('once');
  if (once) return followLoop(ctx, { once, intervalMs: 1000 });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await followLoop(ctx, { once, intervalMs: 1000, signal: stop.signal });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export async function rollbackCommand(ctx: ChangesContext): Promise<number> {
  const table = openTable(ctx);
  const to = ref(ctx.args.required('to'), 'to');
  // Through the Table, not a writer of ours: a damaged latest snapshot stops every writer's open,
  // and a rollback is the way past it (Table.rollbackTo).
  const r = table.rollbackTo(to, { keepHistory: ctx.args.boolean('keep-history') }, { commitUser: 'tilstand-cli' });
  await ctx.out.line(
    JSON.stringify({ snapshot: r.snapshotId, removedSnapshots: r.removedSnapshots, removedTags: r.removedTags, deletedFiles: r.deletedFiles.length }),
  );
  return EXIT.ok;
}

export const CHANGES_COMMANDS: readonly ChangesCommand[] = [
  {
    name: 'diff',
    synopsis: '<db.table> --from <id|tag> [--to <id|tag>] [--mode auto|delta|changelog|diff]',
    summary: 'print the changes in (from, to] as JSON lines with "_kind" (+I -U +U -D); from 0 = the empty table; to defaults to the latest',
    flags: { ...WAREHOUSE, from: { type: 'string', value: '<id|tag>' }, to: { type: 'string', value: '<id|tag>' }, mode: { type: 'string', value: '<mode>' } },
    positionals: ['db.table'],
    run: diffCommand,
  },
  {
    name: 'follow',
    synopsis: '<db.table> --consumer <name> [--once] [--from earliest|latest|<id>] [--mode auto|delta|changelog]',
    summary: 'print changes since the consumer\'s stored position as JSON lines and store the new position; --once exits when caught up, else polls every second until Ctrl-C',
    flags: {
      ...WAREHOUSE,
      consumer: { type: 'string', value: '<name>' },
      once: { type: 'boolean' },
      from: { type: 'string', value: '<earliest|latest|id>' },
      mode: { type: 'string', value: '<mode>' },
    },
    positionals: ['db.table'],
    run: followCommand,
  },
  {
    name: 'rollback',
    synopsis: '<db.table> --to <id|tag> [--keep-history]',
    summary: 'roll back to a snapshot or tag: deletes later snapshots and tags, or with --keep-history commits the old state as a new snapshot',
    flags: { ...WAREHOUSE, to: { type: 'string', value: '<id|tag>' }, 'keep-history': { type: 'boolean' } },
    positionals: ['db.table'],
    run: rollbackCommand,
  },
];
