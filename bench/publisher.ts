// Runs the MQTT publisher child (bench/mqtt-publisher.mjs, plain JS: no TypeScript loader, so it
// starts fast and keeps its own core) and returns its `@@RESULT` object.
import { spawn } from 'node:child_process';

export function runPublisher(script: string, args: Record<string, unknown>): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('@@RESULT '));
      if (code !== 0 || !line) reject(new Error(`publisher exited ${code}: ${out.slice(-500)}`));
      else resolve(JSON.parse(line.slice(9)));
    });
  });
}
