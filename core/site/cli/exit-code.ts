// The exit code of a site command's error (README.md: exit codes), for the dispatcher and for
// `start`, which maps a failed start the site has already reported without printing it again.

import { CliError, EXIT } from '../../lsm/cli/args.ts';
import { ConfigError } from '../config.ts';
import { ControlError } from '../control.ts';
import { SiteError } from '../site.ts';

export function exitCodeOf(e: unknown): number {
  if (e instanceof CliError) return e.exitCode;
  if (e instanceof ConfigError) return EXIT.usage;
  if (e instanceof SiteError) return e.kind === 'AlreadyRunning' ? EXIT.conflict : e.kind === 'NotInitialized' ? EXIT.notFound : EXIT.io;
  if (e instanceof ControlError) return e.kind === 'InvalidArgument' || e.kind === 'UnknownOp' ? EXIT.usage : EXIT.io;
  return EXIT.io;
}
