// For tests: runs the `tilstand` dispatcher in-process with captured output.
import { runCli, type CliRun } from '../../lsm/testing/cli.ts';
import { main } from './main.ts';

/** `tilstand <args>` in this process: the exit code and everything written to stdout and stderr. */
export const runMain = (args: string[], stdin = ''): Promise<CliRun> => runCli(main, args, stdin);
