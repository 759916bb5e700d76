// `tilstand table inspect`: the LSM shape of one snapshot of a table — per partition and bucket
// its levels, files (level, rows, bytes, key range, sequence range), the number of sorted runs
// against the compaction and stop triggers, and the totals. Read-only; the snapshot is pinned
// while it is read.
//
// A damaged file is reported as corruption, never silently skipped: besides what the manifests
// say, every data file the snapshot references and every index (deletion-vector) file its index
// manifest lists is stat'ed — one stat per file, nothing decoded — and a file that is missing or
// whose size differs from the manifest's `fileSize` makes the report a Corruption error (exit 4)
// naming each such file.

import { LsmError, valueToJson, type ReadPoint, type Snapshot, type Table } from '../index.ts';
import { corruption } from '../errors.ts';
import { decodeIndexManifest } from '../manifest.ts';
import { formatBytes, formatTable } from './output.ts';

type FileMeta = ReturnType<Table['buckets']>[number]['files'][number];

export interface InspectFile {
  name: string;
  level: number;
  rows: number;
  bytes: number;
  /** Trimmed primary key (partition columns left out) by column name, JSON values. */
  minKey: Record<string, unknown>;
  maxKey: Record<string, unknown>;
  minSequence: number;
  maxSequence: number;
}

export interface InspectBucket {
  /** Partition path such as `dt=2024-05-01`; '' for an unpartitioned table. */
  partition: string;
  bucket: number;
  sortedRuns: number;
  levels: Array<{ level: number; files: number; rows: number; bytes: number }>;
  files: InspectFile[];
  rows: number;
  bytes: number;
}

export interface InspectReport {
  table: string;
  /** The snapshot inspected; null when the table has none yet. */
  snapshot: number | null;
  compactionTrigger: number;
  stopTrigger: number;
  numLevels: number;
  buckets: InspectBucket[];
  totalFiles: number;
  totalRows: number;
  totalBytes: number;
}

export function inspectTable(name: string, table: Table, at: ReadPoint): InspectReport {
  const o = table.schema.options;
  const reader = table.reader(at);
  try {
    const snapshot = reader.snapshot;
    const report: InspectReport = {
      table: name,
      snapshot: snapshot?.id ?? null,
      compactionTrigger: o.compactionTrigger,
      stopTrigger: o.stopTrigger,
      numLevels: o.numLevels,
      buckets: [],
      totalFiles: 0,
      totalRows: 0,
      totalBytes: 0,
    };
    if (!snapshot) return report;
    // Key columns as the snapshot names them (a key column may have been renamed since).
    const schema = reader.schema;
    const keyFields = schema.keyIndexes.map((i) => schema.fields[i]!);
    const keyJson = (values: unknown[]) => Object.fromEntries(keyFields.map((f, i) => [f.name, valueToJson(f.type, values[i])]));
    const damaged: Damaged[] = [];
    for (const b of table.buckets(snapshot)) {
      for (const f of b.files) checkFile(table, table.dataFilePath(b.partition, b.bucket, f.fileName, f.externalPath), f.fileSize, damaged);
      const runs = table.runsOf(b.files);
      // Files in read order: newest level-0 run first, then each level by key.
      const ordered: FileMeta[] = runs.flatMap((r) => r.files);
      const files = ordered.map((f): InspectFile => {
        const range = table.keyRange(f);
        return {
          name: f.fileName,
          level: f.level,
          rows: f.rowCount,
          bytes: f.fileSize,
          minKey: keyJson(range.min),
          maxKey: keyJson(range.max),
          minSequence: f.minSequenceNumber,
          maxSequence: f.maxSequenceNumber,
        };
      });
      const levels = new Map<number, { level: number; files: number; rows: number; bytes: number }>();
      for (const f of files) {
        const l = levels.get(f.level) ?? { level: f.level, files: 0, rows: 0, bytes: 0 };
        l.files++;
        l.rows += f.rows;
        l.bytes += f.bytes;
        levels.set(f.level, l);
      }
      const bucket: InspectBucket = {
        partition: table.partitionPathOf(b.partition),
        bucket: b.bucket,
        sortedRuns: runs.length,
        levels: [...levels.values()].sort((x, y) => x.level - y.level),
        files,
        rows: files.reduce((s, f) => s + f.rows, 0),
        bytes: files.reduce((s, f) => s + f.bytes, 0),
      };
      report.buckets.push(bucket);
      report.totalFiles += files.length;
      report.totalRows += bucket.rows;
      report.totalBytes += bucket.bytes;
    }
    checkIndexFiles(table, snapshot, damaged);
    if (damaged.length > 0) throw damagedFiles(name, snapshot, damaged);
    return report;
  } finally {
    reader.close();
  }
}

/** Names at most this many damaged files in the error: one stderr line stays readable; the count says how many there are. */
const DAMAGED_NAMED_MAX = 20;

/** A referenced file that is missing (`size` undefined) or not the size its manifest records. */
interface Damaged {
  path: string;
  size: number | undefined;
  manifestSize: number;
}

/** One stat: notes the file in `damaged` unless it is there at `bytes`. */
function checkFile(table: Table, path: string, bytes: number, damaged: Damaged[]): void {
  const io = table.fileIO;
  const size = io.stat ? io.stat(path)?.size : io.exists(path) ? io.size(path) : undefined;
  if (size !== bytes) damaged.push({ path, size, manifestSize: bytes });
}

/** The live index files (deletion vectors, hash indexes) of the snapshot's index manifest, if it has one. */
function checkIndexFiles(table: Table, snapshot: Snapshot, damaged: Damaged[]): void {
  if (!snapshot.indexManifest) return;
  const path = table.paths.manifestFile(snapshot.indexManifest);
  const bytes = table.fileIO.readFileIfExists(path);
  if (bytes === undefined) throw corruption(path, `index manifest of snapshot ${snapshot.id} is missing`);
  for (const e of decodeIndexManifest(bytes, path)) {
    if (e.kind === 0) checkFile(table, table.indexFilePath(e), e.fileSize, damaged);
  }
}

function damagedFiles(name: string, snapshot: Snapshot, damaged: readonly Damaged[]): LsmError {
  const named = damaged
    .slice(0, DAMAGED_NAMED_MAX)
    .map((d) => (d.size === undefined ? `${d.path} is missing` : `${d.path} is ${d.size} bytes, its manifest says ${d.manifestSize}`))
    .join('; ');
  const more = damaged.length > DAMAGED_NAMED_MAX ? `; and ${damaged.length - DAMAGED_NAMED_MAX} more` : '';
  const n = damaged.length === 1 ? '1 damaged file' : `${damaged.length} damaged files`;
  return new LsmError('Corruption', `snapshot ${snapshot.id} of ${name} references ${n}: ${named}${more}`, { path: damaged[0]!.path });
}

/** The human form of a report. */
export function inspectLines(r: InspectReport): string[] {
  const lines = [
    `table ${r.table}, snapshot ${r.snapshot ?? '(none)'}; compaction trigger ${r.compactionTrigger} sorted runs, stop trigger ${r.stopTrigger}, ${r.numLevels} levels`,
  ];
  for (const b of r.buckets) {
    const levels = b.levels.map((l) => `L${l.level}: ${l.files} file${l.files === 1 ? '' : 's'}`).join(', ');
    const over = b.sortedRuns >= r.stopTrigger ? ' (at stop trigger)' : b.sortedRuns >= r.compactionTrigger ? ' (compaction due)' : '';
    lines.push('');
    lines.push(`${b.partition === '' ? '' : `partition ${b.partition}, `}bucket ${b.bucket}: ${b.sortedRuns}/${r.compactionTrigger} sorted runs${over}; ${levels}; ${b.rows} rows, ${formatBytes(b.bytes)}`);
    const rows = b.files.map((f) => [
      String(f.level),
      f.name,
      String(f.rows),
      String(f.bytes),
      JSON.stringify(f.minKey),
      JSON.stringify(f.maxKey),
      `${f.minSequence}..${f.maxSequence}`,
    ]);
    lines.push(...formatTable(['LEVEL', 'FILE', 'ROWS', 'BYTES', 'MIN KEY', 'MAX KEY', 'SEQUENCE'], rows, new Set([0, 2, 3])).map((l) => `  ${l}`));
  }
  lines.push('');
  lines.push(`total: ${r.buckets.length} bucket${r.buckets.length === 1 ? '' : 's'}, ${r.totalFiles} files, ${r.totalRows} rows, ${formatBytes(r.totalBytes)} (${r.totalBytes} bytes)`);
  return lines;
}
