// core/lsm — the table store. This file names its public surface; everything else is private.
export { Catalog, parseIdentifier, type Identifier } from './catalog.ts';
export { LsmError, isCorruption, rowHeld, type LsmErrorKind } from './errors.ts';
export { ForwardingFileIO, LocalFileIO, localFileIO, type FileIO } from './file-io.ts';
export { RowKind, ROW_KIND_TEXT, parseRowKind, type KeyValue, type RowKindText } from './key-value.ts';
export { TableSchema, type SchemaSpec, type TableSchemaJson } from './schema.ts';
export { Table, type ReadPoint, type TableOpenOptions } from './table.ts';
export { KeptTables } from './kept-tables.ts';
export { TableReader, type Predicate, type PredicateOp, type ScanOptions } from './table-read.ts';
export { TableWriter, type CommitResult, type CompactStepResult, type WriterOptions } from './table-writer.ts';
export { CompactionSlicer, type SlicerHooks } from './compaction/slicer.ts';
export type { TagInfo } from './tags.ts';
export { tagTimeLeftMs, RENEW_MARGIN_MS } from './tags.ts';
export type { ExpireResult } from './expire.ts';
export type { ColumnPosition, SchemaChange } from './schema-change.ts';
export type { Snapshot } from './snapshot.ts';
export {
  isWellFormedString,
  parseType,
  typeToString,
  valueFromJson,
  valueToJson,
  type DataField,
  type DataType,
} from './types.ts';
