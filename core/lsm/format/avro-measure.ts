// Avro data file speed: 1M stock-like rows (the level-0 format of `file.format.per.level=0:avro`).
// Run: npx tsx core/lsm/format/avro-measure.ts   (a measurement, not a test; prints rows/s)

import { readAvroData, writeAvroData, type AvroDataCodec } from './avro-data.ts';
import { writeParquet, readParquet } from './parquet/index.ts';
import { parseType } from '../types.ts';

const N = Number(process.argv[2] ?? 1_000_000);
const cols = [
  { name: '_KEY_item', type: parseType('STRING NOT NULL') },
  { name: '_KEY_location', type: parseType('STRING NOT NULL') },
  { name: '_SEQUENCE_NUMBER', type: parseType('BIGINT NOT NULL'), asNumber: true },
  { name: '_VALUE_KIND', type: parseType('TINYINT NOT NULL') },
  { name: 'item', type: parseType('STRING NOT NULL') },
  { name: 'location', type: parseType('STRING NOT NULL') },
  { name: 'qty', type: parseType('INT') },
  { name: 'price', type: parseType('DECIMAL(10, 2)') },
  { name: 'updated', type: parseType('TIMESTAMP(3)') },
];
const item = Array.from({ length: N }, (_, i) => `item-${String(i).padStart(7, '0')}`);
const loc = Array.from({ length: N }, (_, i) => `warehouse-${i % 50}`);
const values: unknown[][] = [
  item, loc, Array.from({ length: N }, (_, i) => i), new Array(N).fill(0), item, loc,
  Array.from({ length: N }, (_, i) => i % 1000), Array.from({ length: N }, (_, i) => BigInt(i % 100_000)),
  Array.from({ length: N }, (_, i) => 1_700_000_000_000_000 + i * 1000),
];
function time(label: string, f: () => number): void {
  const t0 = performance.now();
  const bytes = f();
  const s = (performance.now() - t0) / 1000;
  console.log(`${label.padEnd(28)} ${(N / s / 1000).toFixed(0).padStart(6)} K rows/s  ${(s * 1000).toFixed(0)} ms  ${(bytes / 1e6).toFixed(1)} MB`);
}
for (const codec of ['null', 'snappy', 'deflate'] as AvroDataCodec[]) {
  let file: Uint8Array = new Uint8Array(0);
  time(`avro write ${codec}`, () => (file = writeAvroData(cols, values, N, codec)).length);
  time(`avro read ${codec}`, () => (readAvroData(file, cols, 'x.avro').rowCount, file.length));
}
let pq: Uint8Array = new Uint8Array(0);
const pqCols = cols.map((c, i) => ({ name: c.name, fieldId: i, type: c.type }));
time('parquet write snappy', () => (pq = writeParquet(pqCols, values, N, { compression: 'snappy' })).length);
time('parquet read snappy', () => (readParquet(pq, cols, 'x.parquet').rowCount, pq.length));
