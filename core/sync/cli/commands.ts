// The commands core/sync adds to `tilstand` (the dispatcher in core/site/cli/main.ts spreads this
// map into its table): `hq …`, `sync status|now`, `restore`. Each handler prints its own errors
// and returns the exit code.
import type { CliIO } from '../../lsm/cli/output.ts';
import { hqUsage, runHq } from './hq.ts';
import { runRestore, runSync, syncUsage } from './sync.ts';

export const SYNC_COMMANDS: Record<string, (argv: string[], io: CliIO) => Promise<number>> = {
  hq: runHq,
  sync: runSync,
  restore: runRestore,
};

export const syncCommandsUsage: readonly string[] = [...syncUsage, ...hqUsage];
