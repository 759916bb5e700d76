// The work-queue agent's rules, one file each. A new policy is a new file added here.
import type { Rule } from '../rule.ts';
import { assignJob } from './assign-job.ts';
import { escalateLateJob } from './escalate-late-job.ts';
import { idleResource } from './idle-resource.ts';
import { releaseBlockedJob } from './release-blocked-job.ts';
import { stockReorder } from './stock-reorder.ts';

export { assignJob, escalateLateJob, idleResource, releaseBlockedJob, stockReorder };

export const DEFAULT_RULES: readonly Rule[] = [assignJob, releaseBlockedJob, escalateLateJob, idleResource, stockReorder];
