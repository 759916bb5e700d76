// `tilstand table alter <db.table> …`: schema evolution from the command line (schema-change.ts).
//
//   --add-column <name>:<TYPE>      nullable column at the end (or at --position first|after:<col>)
//   --rename-column <old>:<new>     also primary-key columns; never partition columns
//   --drop-column <name>            not primary-key, partition, or option-referenced columns
//   --set-type <name>:<TYPE>        a cast Paimon permits (widening, or an explicit cast)
//   --set-option <key>=<value>      mutable options only
//   --remove-option <key>
// Every flag may repeat, but an option is named at most once (set twice, removed twice, or set and
// removed: exit 2). The changes are applied as ONE ALTER (one new schema file), in this
// order: add, rename, drop, set-type, set-option, remove-option. Takes the table's writer lock
// (exit 3 while a writer holds the table). Prints {"schema":N,"fields":["id:name:TYPE",…]}.

import type { Catalog } from '../catalog.ts';
import { parseIdentifier } from '../catalog.ts';
import type { ColumnPosition, SchemaChange } from '../schema-change.ts';
import { typeToString } from '../types.ts';
import { usageError, type FlagSpecs, type ParsedArgs } from './args.ts';
import type { LineWriter } from './output.ts';

interface AlterContext {
  args: ParsedArgs;
  out: LineWriter;
  catalog: Catalog;
}

function split(text: string, sep: string, flag: string, what: string): [string, string] {
  const i = text.indexOf(sep);
  if (i <= 0 || i === text.length - 1) throw usageError(`option '--${flag}' expects ${what}, got '${text}'`);
  return [text.slice(0, i).trim(), text.slice(i + 1).trim()];
}

function parsePosition(text: string | undefined): ColumnPosition | undefined {
  if (text === undefined) return undefined;
  if (text === 'first') return { first: true };
  if (text.startsWith('after:') && text.length > 6) return { after: text.slice(6) };
  throw usageError(`option '--position' expects 'first' or 'after:<column>', got '${text}'`);
}

/** The changes the flags ask for, in the documented order. */
export function alterChanges(args: ParsedArgs): SchemaChange[] {
  const changes: SchemaChange[] = [];
  const adds = args.strings('add-column');
  const position = parsePosition(args.string('position'));
  if (position && adds.length !== 1) throw usageError("option '--position' needs exactly one --add-column");
  for (const a of adds) {
    const [name, type] = split(a, ':', 'add-column', '<name>:<TYPE>');
    changes.push({ kind: 'addColumn', name, type, ...(position ? { position } : {}) });
  }
  for (const r of args.strings('rename-column')) {
    const [from, to] = split(r, ':', 'rename-column', '<old>:<new>');
    changes.push({ kind: 'renameColumn', from, to });
  }
  for (const d of args.strings('drop-column')) changes.push({ kind: 'dropColumn', name: d.trim() });
  for (const s of args.strings('set-type')) {
    const [name, type] = split(s, ':', 'set-type', '<name>:<TYPE>');
    changes.push({ kind: 'updateColumnType', name, type });
  }
  // An option named twice in one ALTER (set twice, removed twice, or set and removed) is refused:
  // applied in order, `--set-option k=5 --set-option k=7` stored 7 and said nothing of the 5.
  const optionFlags = new Map<string, string>();
  const once = (key: string, given: string): void => {
    const before = optionFlags.get(key);
    if (before !== undefined) throw usageError(`option '${key}' is named twice (${before}, ${given}); expected each option at most once per alter, set or removed`);
    optionFlags.set(key, given);
  };
  for (const o of args.strings('set-option')) {
    const [key, value] = split(o, '=', 'set-option', '<key>=<value>');
    once(key, `--set-option ${o}`);
    changes.push({ kind: 'setOption', key, value });
  }
  for (const k of args.strings('remove-option')) {
    const key = k.trim();
    once(key, `--remove-option ${k}`);
    changes.push({ kind: 'removeOption', key });
  }
  if (changes.length === 0) {
    throw usageError("'table alter' needs at least one of --add-column, --rename-column, --drop-column, --set-type, --set-option, --remove-option");
  }
  return changes;
}

async function alter(ctx: AlterContext): Promise<number> {
  let id;
  try {
    id = parseIdentifier(ctx.args.positionals[0]!);
  } catch (e) {
    throw usageError((e as Error).message);
  }
  const changes = alterChanges(ctx.args);
  const table = ctx.catalog.getTable(id);
  const schema = table.alter(changes);
  await ctx.out.line(JSON.stringify({ schema: schema.id, fields: schema.fields.map((f) => `${f.id}:${f.name}:${typeToString(f.type)}`) }));
  return 0;
}

const many = (value: string): FlagSpecs[string] => ({ type: 'string', multiple: true, value });

/** The `alter` command, shaped as table-cli.ts's Command (wired into TABLE_COMMANDS there). */
export const ALTER_COMMAND = {
  name: 'alter',
  synopsis: '<db.table> [--add-column <name>:<TYPE> [--position first|after:<col>]] [--rename-column <old>:<new>] [--drop-column <name>] [--set-type <name>:<TYPE>] [--set-option <k>=<v>] [--remove-option <k>]',
  summary: 'evolve the schema in one ALTER (writes schema-<N+1>); prints {"schema":N,"fields":[…]}',
  flags: {
    warehouse: { type: 'string', value: '<dir>' },
    'add-column': many('<name>:<TYPE>'),
    position: { type: 'string', value: 'first|after:<col>' },
    'rename-column': many('<old>:<new>'),
    'drop-column': many('<name>'),
    'set-type': many('<name>:<TYPE>'),
    'set-option': many('<key>=<value>'),
    'remove-option': many('<key>'),
  } satisfies FlagSpecs,
  positionals: ['db.table'],
  run: alter,
};
