// MQTT publisher child of the benchmark (plain JS, no TypeScript loader: starts fast, and runs in
// its own process so the broker under test keeps its core). Three QoS 1 connections, one per
// module (inventory, commerce, procurement), publishing stock envelopes like bench/workload.ts's.
//
// Modes (argument: one JSON object):
//   {port, site, perPublisher, window, maxMs}  as fast as acks allow, at most `window` unacked
//       messages per connection; stops at perPublisher messages or maxMs; prints msg/s from the
//       first publish to the last PUBACK.
//   {port, site, paced: true, rate, durationMs, sampleEvery?}  `rate` msg/s in total, spread over
//       the three connections; prints publish→PUBACK latency percentiles in microseconds. With
//       `sampleEvery` = k, also the publish time of every k-th message (global index i, module
//       i % 3, seq ⌊i/3⌋ + 1) as epoch milliseconds with sub-ms resolution
//       (performance.timeOrigin + performance.now(), comparable across processes) and of its
//       PUBACK: `samples` = [[i, publishedAt, ackedAt], …].
//   {port, site, flood: n, window, probeEveryMs, afterMs}  a dead-letter flood: inventory publishes
//       n envelopes of a contract version the site lacks (99) as fast as `window` unacked allow,
//       while procurement publishes one valid event every `probeEveryMs` until `afterMs` after
//       the flood's last PUBACK and times each probe's PUBACK; prints the flood's rate and the
//       probes' waits in milliseconds (p50, p99, max).
// Optional in all: `passwords` {module: password} (default 'bench' for every module).
// Output: one line `@@RESULT {json}` on stdout.
import mqtt from 'mqtt';

const args = JSON.parse(process.argv[2] ?? '{}');
const MODULES = [
  ['inventory', 'stock', 'inventory.stock', 'qty'],
  ['commerce', 'reservations', 'commerce.reservations', 'reserved_qty'],
  ['procurement', 'inbound', 'procurement.inbound', 'inbound_qty'],
];

function payload(m, seq, version = 1) {
  const [module, stream, contract, qtyField] = MODULES[m];
  const k = (seq * 7919) % 100000;
  return JSON.stringify({
    op: 'u',
    before: null,
    after: { item: `ITEM-${String(Math.floor(k / 5)).padStart(7, '0')}`, location: `LOC-0${k % 5}`, [qtyField]: seq % 1000 },
    source: { module, stream, seq },
    ts_ms: 1764576000000 + seq,
    contract: { name: contract, version },
  });
}

function connect(m) {
  const [module] = MODULES[m];
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(`mqtt://127.0.0.1:${args.port}`, {
      username: module,
      password: args.passwords?.[module] ?? 'bench',
      clientId: `bench-${module}-${process.pid}`,
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 0,
    });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}

const clients = await Promise.all(MODULES.map((_, m) => connect(m)));
const topics = MODULES.map(([module, stream]) => `tilstand/${args.site}/events/${module}/${stream}`);

let result;
if (args.flood) {
  const [inv, , probe] = clients;
  const waits = [];
  let probing = true;
  let pseq = 0;
  const probes = (async () => {
    while (probing) {
      const at = performance.now();
      await new Promise((resolve, reject) => probe.publish(topics[2], payload(2, ++pseq), { qos: 1 }, (err) => (err ? reject(err) : resolve())));
      waits.push(performance.now() - at);
      await new Promise((resolve) => setTimeout(resolve, args.probeEveryMs));
    }
  })();
  const t0 = performance.now();
  let sent = 0;
  let acked = 0;
  await new Promise((resolve, reject) => {
    const pump = () => {
      while (sent < args.flood && sent - acked < args.window) {
        inv.publish(topics[0], payload(0, ++sent, 99), { qos: 1 }, (err) => {
          if (err) return reject(err);
          if (++acked === args.flood) resolve();
          else pump();
        });
      }
    };
    pump();
  });
  const seconds = (performance.now() - t0) / 1000;
  await new Promise((resolve) => setTimeout(resolve, args.afterMs));
  probing = false;
  await probes;
  waits.sort((a, b) => a - b);
  const pct = (p) => waits[Math.min(waits.length - 1, Math.max(0, Math.ceil((p / 100) * waits.length) - 1))];
  result = { acked, seconds, rate: acked / seconds, probes: waits.length, probeP50Ms: pct(50), probeP99Ms: pct(99), probeMaxMs: waits[waits.length - 1] };
} else if (!args.paced) {
  const t0 = performance.now();
  const deadline = t0 + args.maxMs;
  let lastAck = t0;
  const one = (m) =>
    new Promise((resolve) => {
      const c = clients[m];
      let sent = 0;
      let acked = 0;
      let stopped = false;
      const pump = () => {
        if (performance.now() > deadline) stopped = true;
        while (!stopped && sent < args.perPublisher && sent - acked < args.window) {
          const seq = ++sent;
          c.publish(topics[m], payload(m, seq), { qos: 1 }, (err) => {
            if (err) throw err;
            acked++;
            lastAck = performance.now();
            if (acked === sent && (stopped || sent >= args.perPublisher)) resolve(acked);
            else pump();
          });
        }
        if (stopped && acked === sent) resolve(acked);
      };
      pump();
    });
  const counts = await Promise.all(clients.map((_, m) => one(m)));
  const acked = counts.reduce((a, b) => a + b, 0);
  result = { acked, seconds: (lastAck - t0) / 1000, msgPerSec: acked / ((lastAck - t0) / 1000) };
} else {
  const lat = [];
  const samples = [];
  const every = args.sampleEvery ?? 0;
  const t0 = performance.now();
  let sent = 0;
  let acked = 0;
  const total = Math.round((args.rate * args.durationMs) / 1000);
  await new Promise((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) * args.rate) / 1000));
      while (sent < due) {
        const m = sent % 3;
        const seq = Math.floor(sent / 3) + 1;
        const at = performance.now();
        const sample = every > 0 && sent % every === 0 ? [sent, performance.timeOrigin + at, NaN] : undefined;
        if (sample) samples.push(sample);
        sent++;
        clients[m].publish(topics[m], payload(m, seq), { qos: 1 }, () => {
          const now = performance.now();
          if (sample) sample[2] = performance.timeOrigin + now;
          lat.push((now - at) * 1000);
          if (++acked === total) resolve();
        });
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  lat.sort((a, b) => a - b);
  const pct = (p) => lat[Math.min(lat.length - 1, Math.max(0, Math.ceil((p / 100) * lat.length) - 1))];
  result = { sent, acked, p50us: pct(50), p99us: pct(99), maxUs: lat[lat.length - 1], achievedRate: acked / ((performance.now() - t0) / 1000), ...(every > 0 ? { samples } : {}) };
}
await Promise.all(clients.map((c) => c.endAsync()));
process.stdout.write(`@@RESULT ${JSON.stringify(result)}\n`);
process.exit(0);
