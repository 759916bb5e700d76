// `hq export`'s file (export.ts, export-file.ts, output.ts ParquetRowGroups): Parquet written a row
// group at a time as rows arrive (several groups, bytes on disk before the last row, readable by
// our reader and by hyparquet, the bytes of writeParquet cut the same way), nothing left behind
// when the rows fail, and the temporary files of killed exports removed by the next export to
// the same target, never those of a live one.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readFooter } from '../../lsm/format/parquet/footer-read.ts';
import { readParquet, writeParquet, type ParquetColumn } from '../../lsm/format/parquet/index.ts';
import { ALL_TYPES, hyparquetMeta, hyparquetRows, randomValue, rng, sameAsHyparquet } from '../../lsm/format/parquet/test-support.ts';
import { parseType, type DataField, type DataType } from '../../lsm/index.ts';
import { exportRows } from './export.ts';
import { ExportFile } from './export-file.ts';
import { parquetBytes } from './output.ts';

const SEED = Number(process.env.TILSTAND_TEST_SEED ?? Date.now() % 2 ** 31);
console.log(`core/sync/hq/export.test.ts seed ${SEED} (TILSTAND_TEST_SEED=${SEED} to repeat)`);

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const field = (id: number, name: string, type: string): DataField => ({ id, name, type: parseType(type) });
const asColumns = (fields: readonly DataField[]): ParquetColumn[] => fields.map((f) => ({ name: f.name, fieldId: f.id, type: f.type }));
const request = (fields: readonly DataField[]) => fields.map((f) => ({ name: f.name, type: f.type }));
const temps = (d: string) => readdirSync(d).filter((n) => n.endsWith('.tmp'));

/** Every flat type, an ARRAY and a MAP, a key column repeated (Paimon's `_KEY_x`), and a long incompressible text. */
const FIELDS: DataField[] = [
  field(0, 'id', 'INT NOT NULL'),
  field(1, '_KEY_k', 'STRING NOT NULL'),
  field(2, 'k', 'STRING NOT NULL'),
  ...ALL_TYPES.map((t, i) => field(10 + i, `c${i}`, t)),
  field(40, 'list', 'ARRAY<INT>'),
  field(41, 'map', 'MAP<STRING, BIGINT>'),
  field(42, 'text', 'STRING'),
];

function nested(t: DataType, r: () => number, row: number): unknown {
  if (t.nullable && r() < 0.15) return null;
  if (t.root === 'ARRAY') return Array.from({ length: Math.floor(r() * 4) }, (_, i) => nested(t.element!, r, row + i));
  if (t.root === 'MAP') {
    const m = new Map<unknown, unknown>();
    for (let i = Math.floor(r() * 3); i > 0; i--) m.set(`k${Math.floor(r() * 1000)}`, nested(t.value!, r, row + i));
    return m;
  }
  return randomValue(t, r, row);
}

/** Row `i` of the seeded table; `textChars` of printable noise in `text` (snappy cannot shrink it). */
function makeRow(r: () => number, i: number, textChars: number): unknown[] {
  const key = `key-${Math.floor(r() * 50)}`;
  let text = '';
  for (let c = 0; c < textChars; c++) text += String.fromCharCode(33 + Math.floor(r() * 94));
  return [i, key, key, ...FIELDS.slice(3, -3).map((f) => randomValue(f.type, r, i)), nested(FIELDS.at(-3)!.type, r, i), nested(FIELDS.at(-2)!.type, r, i), text];
}

function columnMajor(rows: readonly (readonly unknown[])[], width: number): unknown[][] {
  return Array.from({ length: width }, (_, c) => rows.map((row) => row[c] ?? null));
}

describe('hq export --format parquet, streamed', () => {
  it('writes a group at a time as rows arrive: several groups, on disk before the last row, read back by our reader and hyparquet', async () => {
    const r = rng(SEED);
    const rows = Array.from({ length: 2500 }, (_, i) => makeRow(r, i, 2000));
    const out = mkdtempSync(join(dir, 'stream-'));
    const dest = join(out, 'stock.parquet');
    let midway = -1;
    function* source(): Generator<unknown[]> {
      for (let i = 0; i < rows.length; i++) {
        // Two groups of ~2 MB of text each are complete by now: they must already be in the file.
        if (i === 2100) midway = statSync(join(out, temps(out)[0]!)).size;
        yield rows[i]!;
      }
    }
    expect(exportRows(dest, 'parquet', FIELDS, source(), { rows: 1000, bytes: 1 << 30 })).toBe(2500);
    // Was 0 (or no temporary file yet): the whole table was gathered before anything was written.
    expect(midway).toBeGreaterThan(2 * 1024 * 1024);
    expect(readdirSync(out)).toEqual(['stock.parquet']);

    const bytes = new Uint8Array(readFileSync(dest));
    // Three row groups in the footer (was one, of every row), in our reader and in hyparquet's.
    expect(readFooter(bytes).rowGroups.map((g) => g.numRows)).toEqual([1000, 1000, 500]);
    expect(hyparquetMeta(bytes).row_groups.map((g) => Number(g.num_rows))).toEqual([1000, 1000, 500]);
    // The file writeParquet makes of the same rows cut into the same groups, byte for byte.
    const values = columnMajor(rows, FIELDS.length);
    expect(Buffer.compare(Buffer.from(bytes), Buffer.from(writeParquet(asColumns(FIELDS), values, rows.length, { compression: 'snappy', rowGroupRows: 1000 })))).toBe(0);
    // Every value back, with our reader and with hyparquet (an independent implementation).
    const back = readParquet(bytes, request(FIELDS), dest);
    expect(back.rowCount).toBe(2500);
    expect(back.columns).toEqual(values);
    // (Bytes as latin1 text, as the codec's own tests read them: utf8 off for the BYTES columns.)
    const h = await hyparquetRows(bytes, false);
    expect(h).toHaveLength(2500);
    for (let c = 0; c < FIELDS.length; c++) {
      const f = FIELDS[c]!;
      if (f.type.root === 'ARRAY' || f.type.root === 'MAP') continue;
      for (let i = 0; i < rows.length; i++) {
        let got = h[i]![f.name];
        if (typeof got === 'string' && (f.type.root === 'BYTES' || f.type.root === 'BINARY')) got = Buffer.from(got, 'latin1');
        if (!sameAsHyparquet(f.type, values[c]![i] ?? null, got)) expect.fail(`hyparquet reads ${f.name} of row ${i} as ${String(got)}, we wrote ${String(values[c]![i])}`);
      }
    }
  }, 60_000);

  it('cuts a group at the byte limit when rows are large, before the row limit', () => {
    const fields = [field(0, 'id', 'INT NOT NULL'), field(1, 'text', 'STRING')];
    const rows = Array.from({ length: 23 }, (_, i) => [i, String.fromCharCode(97 + (i % 26)).repeat(10_000)]);
    const dest = join(mkdtempSync(join(dir, 'bytes-')), 'big.parquet');
    // A row holds about 20 kB (2 bytes a character): 100 kB is reached at the 5th.
    expect(exportRows(dest, 'parquet', fields, rows, { rows: 1000, bytes: 100_000 })).toBe(23);
    const bytes = new Uint8Array(readFileSync(dest));
    expect(readFooter(bytes).rowGroups.map((g) => g.numRows)).toEqual([5, 5, 5, 5, 3]);
    expect(readParquet(bytes, request(fields), dest).columns).toEqual(columnMajor(rows, 2));
  });

  it('writes the file writeParquet writes when the table fits one group, and an empty table', () => {
    const r = rng(SEED + 1);
    const out = mkdtempSync(join(dir, 'one-'));
    for (const n of [0, 1, 300]) {
      const rows = Array.from({ length: n }, (_, i) => makeRow(r, i, 20));
      const dest = join(out, `t${n}.parquet`);
      expect(exportRows(dest, 'parquet', FIELDS, rows)).toBe(n);
      expect(Buffer.compare(readFileSync(dest), Buffer.from(parquetBytes(FIELDS, rows))), `${n} rows`).toBe(0);
    }
  });

  it('leaves nothing at the target nor beside it when the rows fail after a group was written', () => {
    const out = mkdtempSync(join(dir, 'fail-'));
    const fields = [field(0, 'id', 'INT NOT NULL')];
    function* source(): Generator<unknown[]> {
      for (let i = 0; i < 1500; i++) yield [i];
      throw new Error('bucket-1 is damaged');
    }
    expect(() => exportRows(join(out, 'x.parquet'), 'parquet', fields, source(), { rows: 1000, bytes: 1 << 30 })).toThrow('bucket-1 is damaged');
    expect(readdirSync(out)).toEqual([]);
  });

  it('refuses row group limits that are not integers ≥ 1, naming the limit', () => {
    const dest = join(mkdtempSync(join(dir, 'limits-')), 'x.parquet');
    expect(() => exportRows(dest, 'parquet', FIELDS, [], { rows: 0, bytes: 1 })).toThrow("row group limit 'rows': expected an integer ≥ 1, got 0");
    expect(() => exportRows(dest, 'parquet', FIELDS, [], { rows: 10, bytes: 0.5 })).toThrow("row group limit 'bytes': expected an integer ≥ 1, got 0.5");
    expect(readdirSync(join(dest, '..'))).toEqual([]);
  });
});

/** A child process that opens an ExportFile for `dest`, writes 2 MiB into it and waits; resolves once it has written. */
async function exportingChild(dest: string): Promise<ChildProcess> {
  const script = `
    import { ExportFile } from ${JSON.stringify(resolve(dirname(fileURLToPath(import.meta.url)), 'export-file.ts'))};
    const f = new ExportFile(${JSON.stringify(dest)});
    f.bytes(new Uint8Array(2 << 20));
    console.log('writing');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((ready, fail) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('writing')) ready();
    });
    child.on('exit', (code) => fail(new Error(`child exited (${code}) before writing: ${out}`)));
  });
  return child;
}

const exited = (child: ChildProcess) => new Promise<void>((done) => (child.exitCode !== null || child.signalCode !== null ? done() : child.on('exit', () => done())));

describe('temporary files of killed exports', () => {
  it('are removed by the next export to the same target; those of live exports, other hosts and other targets stay', async () => {
    const out = mkdtempSync(join(dir, 'stale-'));
    const dest = join(out, 'stock.csv');
    const fields = [field(0, 'id', 'INT NOT NULL')];

    // An export killed with SIGKILL midway leaves its temporary file.
    const killed = await exportingChild(dest);
    const killedTemp = temps(out);
    expect(killedTemp).toHaveLength(1);
    killed.kill('SIGKILL');
    await exited(killed);
    expect(temps(out)).toEqual(killedTemp);

    // Alive while the next export runs: another process's export, and one of this process.
    const live = await exportingChild(dest);
    const inProcess = new ExportFile(dest);
    try {
      const liveTemps = temps(out).filter((n) => !killedTemp.includes(n));
      expect(liveTemps).toHaveLength(2);
      // Left by a dead pid of another host (a shared directory), an older version's name without a
      // pid, and a dead export to another target.
      const otherHost = `.stock.csv.${killed.pid}@elsewhere-not-this-host.${randomUUID()}.tmp`;
      const oldName = `.stock.csv.${randomUUID()}.tmp`;
      const otherTarget = killedTemp[0]!.replace('.stock.csv.', '.stock.csv.bak.');
      for (const n of [otherHost, oldName, otherTarget]) writeFileSync(join(out, n), 'x');

      expect(exportRows(dest, 'csv', fields, [[1], [2]])).toBe(2);
      expect(readFileSync(dest, 'utf8')).toBe('id\n1\n2\n');
      // Was still there: nothing ever removed a killed export's file.
      expect(existsSync(join(out, killedTemp[0]!))).toBe(false);
      expect(temps(out).sort()).toEqual([...liveTemps, otherHost, oldName, otherTarget].sort());
    } finally {
      inProcess.abort();
      live.kill('SIGKILL');
      await exited(live);
    }
  }, 60_000);
});

describe('a long target name', () => {
  // `.<name>.<pid>@<host>.<uuid>.tmp` adds up to ~120 bytes to the name: a target name of 200
  // bytes failed with ENAMETOOLONG before a row was written.
  it('exports to a name near the file system limit (255 bytes), and the next export removes a killed one\'s temporary file', async () => {
    const out = mkdtempSync(join(dir, 'long-'));
    const name = `${'ø'.repeat(120)}-lager.csv`; // 250 bytes of UTF-8
    expect(Buffer.byteLength(name)).toBe(250);
    const dest = join(out, name);
    const fields = [field(0, 'id', 'INT NOT NULL')];

    expect(exportRows(dest, 'csv', fields, [[1]])).toBe(1);
    expect(readFileSync(dest, 'utf8')).toBe('id\n1\n');
    expect(temps(out)).toEqual([]);

    const killed = await exportingChild(dest);
    const killedTemp = temps(out);
    expect(killedTemp).toHaveLength(1);
    expect(Buffer.byteLength(killedTemp[0]!)).toBeLessThanOrEqual(255);
    killed.kill('SIGKILL');
    await exited(killed);
    // A dead export to another long target that shares the first 200 bytes of the name stays.
    const otherDest = join(out, `${'ø'.repeat(120)}-annet.csv`);
    const other = await exportingChild(otherDest);
    const otherTemp = temps(out).filter((n) => !killedTemp.includes(n));
    other.kill('SIGKILL');
    await exited(other);

    expect(exportRows(dest, 'csv', fields, [[2]])).toBe(1);
    expect(readFileSync(dest, 'utf8')).toBe('id\n2\n');
    expect(temps(out)).toEqual(otherTemp);
  }, 60_000);
});
