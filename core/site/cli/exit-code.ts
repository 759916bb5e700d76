// The exit code of a site command's error (README.md: exit codes), for the dispatcher and for
// `start`, which maps a failed start the site has already reported without printing it again.

import { JournalError } from '../../ingest/journal.ts';
import { CliError, EXIT } from '../../lsm/cli/args.ts';
import { isCorruption } from '../../lsm/errors.ts';
import { isSqliteCorruption } from '../../sync/cli/common.ts';
import { ConfigError } from '../config.ts';
import { ControlError } from '../control.ts';
import { DataFormatError } from '../data-format.ts';
import { SiteError } from '../site.ts';

export function exitCodeOf(e: unknown): number {
  if (e instanceof CliError) return e.exitCode;
  if (e instanceof ConfigError) return EXIT.usage;
  // A directory a newer program made, which this one would misread: the operator ran the wrong
  // program on it (as an older program refusing a config key it does not know, exit 2); the files
  // are sound, so not corruption. A mark that is not numbers is damage (4).
  if (e instanceof DataFormatError) return e.kind === 'TooNew' ? EXIT.usage : EXIT.corruption;
  if (e instanceof SiteError) return e.kind === 'AlreadyRunning' ? EXIT.conflict : e.kind === 'NotInitialized' ? EXIT.notFound : e.kind === 'RestoreUnfinished' ? EXIT.usage : EXIT.io;
  // A running site's answer that names a damaged file (`ingest.resume`) is 4, as below.
  if (e instanceof ControlError) return e.kind === 'InvalidArgument' || e.kind === 'UnknownOp' ? EXIT.usage : e.kind === 'Corruption' ? EXIT.corruption : EXIT.io;
  // Damage is 4 whichever file holds it, as for `tilstand table`, so a script can tell it (restore
  // from HQ) from a disk that fails (5): a table's file, the journal, or site.db, whose SQLite
  // errors come through unwrapped.
  if (isCorruption(e) || (e instanceof JournalError && e.kind === 'Corruption') || isSqliteCorruption(e)) return EXIT.corruption;
  return EXIT.io;
}
