// The `tilstand` command's dispatcher (bin/tilstand.mjs calls `main`). It returns the exit code
// rather than exiting, and takes its streams as an argument, so tests run it in-process.
//
//   tilstand table …        the table store's command line (core/lsm/cli), after the data format
//                           mark of the data directory whose warehouse it is given (site-commands.ts)
//   tilstand start …        run the site (start.ts)
//   tilstand init|status|config|contracts|deadletters|ingest|users|demo …   site commands (site-commands.ts)
//   tilstand proposals|decide|agent|evidence …   the inbox and the agent (agent-cli.ts)
//   tilstand help           usage of every command
// An unknown command prints the usage to stderr and exits 2. A failing site command prints
// `tilstand: <message>` and exits with the code of its error (CliError), 2 for a config error,
// 5 otherwise.

import { EXIT } from '../../lsm/cli/args.ts';
import { LineWriter, type CliIO } from '../../lsm/cli/output.ts';
import { tableUsage, writeError } from '../../lsm/cli/table-cli.ts';
import { exitCodeOf } from './exit-code.ts';
import { runConfig, runContracts, runDeadLetters, runDemo, runIngest, runInit, runStatus, runModules, runSiteReplay, runSiteRestore, runSiteSync, runSiteTable, runUsers, siteUsage } from './site-commands.ts';
import { runStart, startUsage } from './start.ts';
import { AGENT_COMMANDS, agentUsage } from './agent-cli.ts';
import { SYNC_COMMANDS, syncCommandsUsage } from '../../sync/cli/commands.ts';
import { REPLAY_COMMANDS, replayUsage } from '../../replay/cli.ts';

export type { CliIO } from '../../lsm/cli/output.ts';

function usage(): string[] {
  return [
    'usage: tilstand <command> …   (--data defaults to ./tilstand-data)',
    '',
    ...startUsage,
    ...siteUsage,
    ...agentUsage,
    ...syncCommandsUsage,
    ...replayUsage,
    '  tilstand table <command> …               the table store, see below',
    '  tilstand help                            this text',
    '',
    ...tableUsage().slice(2),
  ];
}

async function print(out: NodeJS.WritableStream, lines: readonly string[]): Promise<void> {
  const w = new LineWriter(out);
  try {
    await w.lines(lines);
    await w.end();
  } catch {
    // the reader went away
  }
}

/** The process's streams; stdin only when a command reads it (touching it opens the stream). */
const processIO = (): CliIO => ({
  get stdin() {
    return process.stdin;
  },
  stdout: process.stdout,
  stderr: process.stderr,
});

const SITE_COMMANDS: Record<string, (argv: string[], io: CliIO) => Promise<number>> = {
  start: runStart,
  init: runInit,
  status: runStatus,
  config: runConfig,
  contracts: runContracts,
  deadletters: runDeadLetters,
  ingest: runIngest,
  users: runUsers,
  modules: runModules,
  demo: runDemo,
  ...AGENT_COMMANDS,
  ...SYNC_COMMANDS,
  // `sync now` asks a running site that syncs (it holds the sender lock); the rest is core/sync's.
  sync: runSiteSync,
  ...REPLAY_COMMANDS,
  // Through the data format gate first (data-format.ts), which core/sync, core/replay and core/lsm cannot import.
  restore: runSiteRestore,
  replay: runSiteReplay,
  // `--warehouse <data>/warehouse`: the data directory's mark first; a bare warehouse as before.
  table: runSiteTable,
};

export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    await print(io.stdout, usage());
    return EXIT.ok;
  }
  const run = command === undefined ? undefined : Object.hasOwn(SITE_COMMANDS, command) ? SITE_COMMANDS[command] : undefined;
  if (!run) {
    await writeError(io, command === undefined ? 'no command given' : `unknown command '${command}'`);
    await print(io.stderr, ['', ...usage()]);
    return EXIT.usage;
  }
  try {
    return await run(rest, io);
  } catch (e) {
    await writeError(io, (e as Error).message);
    return exitCodeOf(e);
  }
}
