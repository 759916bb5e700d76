// `tilstand start [--data <dir>] [--headless] [--demo] [--mqtt-port <n>] [--http-port <n>]`:
// runs the site until SIGINT or SIGTERM (or a `stop` on the control socket), then stops it
// cleanly and exits 0. Prints where the broker and the HTTP server listen (the bound ports, so
// `--mqtt-port 0 --http-port 0` is useful). The UI comes later: `--headless` is accepted and
// the output says so.

import { EXIT, parseArgs, type FlagSpecs } from '../../lsm/cli/args.ts';
import { Site } from '../site.ts';
import { dataDir, nextSignal, port, positiveInt, print, type CliIO } from './common.ts';

export const START_FLAGS: FlagSpecs = {
  data: { type: 'string', value: '<dir>' },
  headless: { type: 'boolean' },
  demo: { type: 'boolean' },
  'mqtt-port': { type: 'string', value: '<n>' },
  'http-port': { type: 'string', value: '<n>' },
  'demo-seed': { type: 'string', value: '<n>' },
  'demo-step-ms': { type: 'string', value: '<ms>' },
};

export const startUsage = [
  '  tilstand start [--data <dir>] [--demo] [--headless] [--mqtt-port <n>] [--http-port <n>]',
  '                                           run the site until Ctrl-C (--demo: a demo site with simulated modules;',
  '                                           port 0 = any free port)',
];

export async function runStart(argv: string[], io: CliIO): Promise<number> {
  const a = parseArgs(argv, START_FLAGS, 'start');
  if (a.help) {
    await print(io.stdout, ['usage:', ...startUsage]);
    return EXIT.ok;
  }
  const data = dataDir(a.string('data'));
  const demo = a.boolean('demo');
  const mqttPort = port(a.string('mqtt-port'), 'mqtt-port');
  const httpPort = port(a.string('http-port'), 'http-port');
  const seed = positiveInt(a.string('demo-seed'), 'demo-seed');
  const stepMs = positiveInt(a.string('demo-step-ms'), 'demo-step-ms');
  const signal = nextSignal();
  const site = await Site.start({
    data,
    demo,
    ...(mqttPort !== undefined ? { mqttPort } : {}),
    ...(httpPort !== undefined ? { httpPort } : {}),
    ...(seed !== undefined ? { demoSeed: seed } : {}),
    ...(stepMs !== undefined ? { demoStepMs: stepMs } : {}),
    log: (line) => io.stderr.write(`tilstand: ${line}\n`),
  });
  const b = site.config.broker;
  await print(io.stdout, [
    `tilstand: site ${site.config.site} running from ${data}`,
    `  mqtt:    ${site.mqttUrl}${b.mode === 'embedded' ? ' (embedded broker)' : ' (external broker)'}`,
    `  http:    ${site.httpUrl}/metrics  ${site.httpUrl}/healthz`,
    `  control: ${site.controlSocketPath ?? '(none)'}`,
    `  ui:      none yet${a.boolean('headless') ? ' (--headless)' : ''} — the floor UI comes later; use \`tilstand status --data ${data}\``,
    ...(demo ? ['  demo:    simulated operations, inventory, commerce and procurement modules are publishing'] : []),
    '  stop with Ctrl-C (SIGINT) or SIGTERM',
  ]);
  const why = await Promise.race([signal.then((s) => `received ${s}`), site.stopped.then(() => 'stopped through the control socket')]);
  await print(io.stdout, [`tilstand: ${why}; stopping`]);
  await site.stop();
  await print(io.stdout, ['tilstand: stopped cleanly']);
  return EXIT.ok;
}
