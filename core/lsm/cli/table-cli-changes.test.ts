// `tilstand table diff | follow | rollback`, run in-process through the command handlers with
// the same argument parsing and output writer table-cli.ts uses.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../catalog.ts';
import { RowKind } from '../key-value.ts';
import { parseArgs } from './args.ts';
import { LineWriter } from './output.ts';
import { CHANGES_COMMANDS, followLoop, type ChangesContext } from './table-cli-changes.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function warehouse(): { dir: string; catalog: Catalog } {
  const dir = mkdtempSync(join(tmpdir(), 'cli-changes-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  catalog.createTable(
    { database: 'db', table: 't' },
    { fields: [{ name: 'k', type: 'STRING' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1', 'changelog-producer': 'lookup' } },
  );
  return { dir, catalog };
}

async function run(dir: string, name: string, argv: string[], loop?: Parameters<typeof followLoop>[1]): Promise<{ code: number; lines: Record<string, unknown>[] }> {
  const cmd = CHANGES_COMMANDS.find((c) => c.name === name)!;
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (d) => (text += d));
  const args = parseArgs(['--warehouse', dir, ...argv], cmd.flags, `table ${name}`);
  const out = new LineWriter(stdout);
  const ctx: ChangesContext = { args, io: { stdin: Readable.from([]), stdout, stderr: new PassThrough() }, out, catalog: new Catalog(dir) };
  const code = loop ? await followLoop(ctx, loop) : await cmd.run(ctx);
  await out.end();
  return { code, lines: text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('table diff / follow / rollback', () => {
  it('diff prints JSON lines with _kind in every mode; follow --once prints once per consumer; rollback both ways', async () => {
    const { dir, catalog } = warehouse();
    const t = catalog.getTable({ database: 'db', table: 't' });
    const w = t.newWriter();
    w.writeRecord({ k: 'a', v: 1 });
    w.commit();
    t.createTag('one');
    w.writeRecord({ k: 'a', v: 2 });
    w.writeRecord({ k: 'b', v: 1 });
    w.commit();
    w.writeRecord({ k: 'b', v: 1 }, RowKind.DELETE);
    w.commit();
    w.close();

    const diff = await run(dir, 'diff', ['db.t', '--from', 'one', '--to', '3', '--mode', 'diff']);
    expect(diff.code).toBe(0);
    expect(diff.lines).toEqual([
      { _kind: '-U', k: 'a', v: 1 },
      { _kind: '+U', k: 'a', v: 2 },
    ]);
    const cl = await run(dir, 'diff', ['db.t', '--from', '1', '--mode', 'changelog']);
    expect(cl.lines.map((l) => `${l._kind}${l.k}${l.v}`)).toEqual(['-Ua1', '+Ua2', '+Ib1', '-Db1']);
    const delta = await run(dir, 'diff', ['db.t', '--from', '0', '--to', '1', '--mode', 'delta']);
    expect(delta.lines).toEqual([{ _kind: '+I', k: 'a', v: 1 }]);
    await expect(run(dir, 'diff', ['db.t', '--from', '0', '--mode', 'sideways'])).rejects.toThrow(/--mode/);

    const f1 = await run(dir, 'follow', ['db.t', '--consumer', 'c1', '--once']);
    expect(f1.lines.map((l) => `${l._kind}${l.k}${l.v}`)).toEqual(['+Ia1', '-Ua1', '+Ua2', '+Ib1', '-Db1']);
    expect((await run(dir, 'follow', ['db.t', '--consumer', 'c1', '--once'])).lines).toEqual([]);

    // Without --once: polls until stopped.
    const stop = new AbortController();
    const following = run(dir, 'follow', ['db.t', '--consumer', 'c1'], { once: false, intervalMs: 20, signal: stop.signal });
    const w2 = t.newWriter();
    w2.writeRecord({ k: 'c', v: 7 });
    w2.commit();
    w2.close();
    await new Promise((r) => setTimeout(r, 100));
    stop.abort();
    expect((await following).lines).toEqual([{ _kind: '+I', k: 'c', v: 7 }]);

    const keep = await run(dir, 'rollback', ['db.t', '--to', 'one', '--keep-history']);
    expect(keep.lines).toEqual([{ snapshot: 5, removedSnapshots: [], removedTags: [], deletedFiles: 0 }]);
    const back = await run(dir, 'rollback', ['db.t', '--to', '2']);
    expect(back.lines[0]).toMatchObject({ snapshot: 2, removedSnapshots: [5, 4, 3] });
    expect(catalog.getTable({ database: 'db', table: 't' }).scanRows().map((r) => r.join(','))).toEqual(['a,2', 'b,1']);
  });

  it('rollback gets past a damaged latest snapshot, which stops every writer', async () => {
    const { dir, catalog } = warehouse();
    const t = catalog.getTable({ database: 'db', table: 't' });
    const w = t.newWriter();
    for (const v of [1, 2]) {
      w.writeRecord({ k: 'a', v });
      w.commit();
    }
    w.close();
    writeFileSync(join(t.paths.snapshotDir, 'snapshot-2'), '{"id": 2');
    expect(() => catalog.getTable({ database: 'db', table: 't' }).newWriter()).toThrow(/corruption in .*snapshot-2/);
    const back = await run(dir, 'rollback', ['db.t', '--to', '1']);
    expect(back.lines).toEqual([{ snapshot: 1, removedSnapshots: [2], removedTags: [], deletedFiles: 0 }]);
    expect(catalog.getTable({ database: 'db', table: 't' }).scanRows()).toEqual([['a', 1]]);
  });
});
