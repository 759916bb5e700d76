// Holds a SIGHUP that comes before `tilstand start` listens for one, and hands it over once it does.
//
// Node ends the process on a SIGHUP nobody listens for. `tilstand start` listens (core/site/cli/
// start.ts `sighupReloads`: a reload, or one remembered while the site starts and made once it
// runs) only once its code has loaded, seconds under tsx: a `systemctl reload` or `kill -HUP` in
// that moment ended the site. bin/tilstand.mjs imports this first, so it listens before anything
// else loads, and passes a held signal on to the first listener after it, then steps aside.
// Only for `start`: another command keeps Node's default (a closed terminal ends it). Not on
// Windows, which sends SIGHUP only when the console closes (start.ts does not listen there).
//
// In the built tree this file is copied beside the bundle, and dist/site/tilstand.mjs imports it
// before the bundle (site.mjs), whose packages load before any of its own code (scripts/
// build-site.mjs `launch`; core/site/DESIGN.md, "How a site process starts").

if (process.argv[2] === 'start' && process.platform !== 'win32') {
  let held = false;
  const hold = () => {
    held = true;
  };
  process.on('SIGHUP', hold);
  process.on('newListener', function handOver(event) {
    if (event !== 'SIGHUP') return;
    process.off('newListener', handOver);
    // Once the new listener is in, so there is no moment without one. A signal is delivered from
    // the event loop, never between this microtask and the listener's addition.
    queueMicrotask(() => {
      process.off('SIGHUP', hold);
      if (held) process.emit('SIGHUP', 'SIGHUP');
    });
  });
}
