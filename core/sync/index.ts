// core/sync — outbox to HQ, sync targets (directory, S3-compatible), HQ-side reading, restore.
// This file names its public surface (see DESIGN.md).
export { SyncEngine, SYNC_LOCK_FILE, statusOf, type SyncEngineOptions, type SyncStatus, type SyncNowResult, type RetryOptions, type PlanResult, type RunResult } from './engine.ts';
export { SyncError, isSyncError, type SyncErrorKind } from './errors.ts';
export { checkKey, sitePrefix, siteDatabase, holdTagName, isHoldTag } from './names.ts';
export { openOutboxDb, Outbox } from './outbox.ts';
export { referencedFiles } from './plan.ts';
export { createScheduledTags, hourlyTagName, DEFAULT_SCHEDULED_TAGS, type ScheduledTagRule } from './scheduled-tags.ts';
export { hqDataFormatKey, readHqDataFormat, type HqDataFormat, type ProgramDataFormat } from './hq-data-format.ts';
export { restoreSite, resyncRequests, readRestoreNote, type ResyncRequest, type RestoreNote } from './restore.ts';
export { HqStore } from './hq/store.ts';
export { mirrorSite } from './hq/mirror.ts';
export { DirectoryTarget } from './targets/directory.ts';
export { S3Target, type S3TargetOptions } from './targets/s3.ts';
export { openTarget, targetDescription, targetPlace, targetProblem } from './targets/open.ts';
export type { SyncTarget, ObjectInfo, PutMeta } from './targets/target.ts';
export { runHq, hqUsage } from './cli/hq.ts';
export { runSync, runRestore, syncUsage, syncStatusLines } from './cli/sync.ts';
