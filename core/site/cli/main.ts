// The `tilstand` command's dispatcher (bin/tilstand.mjs calls `main`). It returns the exit code
// rather than exiting, and takes its streams as an argument, so tests run it in-process.
//
//   tilstand table …   the table store's command line (core/lsm/cli)
//   tilstand start …   the site runtime (a notice for now; see start.ts)
//   tilstand help      usage of every command
// An unknown command prints the usage to stderr and exits 2.

import { EXIT } from '../../lsm/cli/args.ts';
import { LineWriter, type CliIO } from '../../lsm/cli/output.ts';
import { runTableCli, tableUsage, writeError } from '../../lsm/cli/table-cli.ts';
import { startNotice } from './start.ts';

export type { CliIO } from '../../lsm/cli/output.ts';

function usage(): string[] {
  return [
    'usage: tilstand <command> …',
    '',
    '  tilstand start [--data <dir>] [--demo]   run the site (not built yet: prints what exists)',
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

export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'table':
      return runTableCli(rest, io);
    case 'start':
      await print(io.stdout, startNotice(rest));
      return EXIT.ok;
    case 'help':
    case '--help':
    case '-h':
      await print(io.stdout, usage());
      return EXIT.ok;
    default:
      await writeError(io, command === undefined ? 'no command given' : `unknown command '${command}'`);
      await print(io.stderr, ['', ...usage()]);
      return EXIT.usage;
  }
}
