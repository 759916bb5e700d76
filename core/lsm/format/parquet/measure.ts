// Measures write and read speed of the Parquet codec on 1 M rows of a stock-like primary-key
// data file (snappy). Run: node bin/run-ts.mjs core/lsm/format/parquet/measure.ts [rows] [compression]
// Not a test: prints rows/s (median of 5 runs after 1 warm-up) and bytes/row.

import { parseType } from '../../types.ts';
import { readParquet, writeParquet, type ParquetColumn, type ParquetCompression, type ParquetReadColumn } from './index.ts';

const rows = Number(process.argv[2] ?? 1_000_000);
const compression = (process.argv[3] ?? 'snappy') as ParquetCompression;

const columns: ParquetColumn[] = [
  { name: '_KEY_item', fieldId: 1073741823, type: parseType('STRING NOT NULL') },
  { name: '_KEY_location', fieldId: 1073741824, type: parseType('STRING NOT NULL') },
  { name: '_SEQUENCE_NUMBER', fieldId: 2147483646, type: parseType('BIGINT NOT NULL') },
  { name: '_VALUE_KIND', fieldId: 2147483645, type: parseType('TINYINT NOT NULL') },
  { name: 'item', fieldId: 0, type: parseType('STRING NOT NULL') },
  { name: 'location', fieldId: 1, type: parseType('STRING NOT NULL') },
  { name: 'on_hand', fieldId: 2, type: parseType('INT') },
  { name: 'reserved', fieldId: 3, type: parseType('INT') },
  { name: 'inbound', fieldId: 4, type: parseType('INT') },
];
const request: ParquetReadColumn[] = columns.map((c) => ({ name: c.name, type: c.type, asNumber: c.name === '_SEQUENCE_NUMBER' }));

// 100 k items × 10 locations, sorted by key as a flushed run is; sequence numbers as numbers
// (the flush path holds them so); a few nulls in the value columns.
const locations = Array.from({ length: 10 }, (_, i) => `WH-${String(i).padStart(2, '0')}-A`);
const values: unknown[][] = columns.map(() => new Array(rows));
let seed = 12345;
const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
for (let r = 0; r < rows; r++) {
  const item = `SKU-${String(Math.floor(r / 10)).padStart(7, '0')}`;
  const loc = locations[r % 10]!;
  values[0]![r] = item;
  values[1]![r] = loc;
  values[2]![r] = r * 3 + 17;
  values[3]![r] = rnd() < 0.05 ? 2 : 0;
  values[4]![r] = item;
  values[5]![r] = loc;
  values[6]![r] = Math.floor(rnd() * 5000);
  values[7]![r] = rnd() < 0.1 ? null : Math.floor(rnd() * 100);
  values[8]![r] = rnd() < 0.3 ? null : Math.floor(rnd() * 1000);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

let file = writeParquet(columns, values, rows, { compression });
readParquet(file, request, 'measure');
const wt: number[] = [];
const rt: number[] = [];
for (let i = 0; i < 5; i++) {
  let t = performance.now();
  file = writeParquet(columns, values, rows, { compression });
  wt.push(performance.now() - t);
  t = performance.now();
  const back = readParquet(file, request, 'measure');
  rt.push(performance.now() - t);
  if (back.rowCount !== rows || back.columns[0]![rows - 1] !== values[0]![rows - 1]) throw new Error('round trip failed');
}
const w = median(wt);
const r = median(rt);
console.log(`rows ${rows}, ${compression}, ${file.length} bytes (${(file.length / rows).toFixed(1)} B/row)`);
console.log(`write ${w.toFixed(0)} ms → ${((rows / w) * 1000 / 1e6).toFixed(2)} M rows/s`);
console.log(`read  ${r.toFixed(0)} ms → ${((rows / r) * 1000 / 1e6).toFixed(2)} M rows/s`);
