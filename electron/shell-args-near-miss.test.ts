// A mistyped flag of ours (`--htp-port 18470`, `--kiosc`) was ignored with the arguments Chromium
// adds, so the shell came up on the config's port, or out of kiosk mode, without a word. A flag
// within two edits of one of ours is refused naming the flag meant; Chromium's and Electron's own
// switches (and anything further from ours) still pass.
import { expect, it } from 'vitest';
import { parseShellArgs, ShellArgsError, SHELL_USAGE } from './main-process.ts';

it.each([
  ['--htp-port', '--http-port'],
  ['--http-prot', '--http-port'],
  ['--mqtt_port', '--mqtt-port'],
  ['--kiosc', '--kiosk'],
  ['--dmeo', '--demo'],
  ['--dat', '--data'],
  ['--full-screen', '--fullscreen'],
  ['--serve-iu', '--serve-ui'],
])('refuses %s, naming %s', (typo, meant) => {
  expect(() => parseShellArgs([typo, '18470'])).toThrow(ShellArgsError);
  expect(() => parseShellArgs([`${typo}=18470`])).toThrow(`${typo}: unknown option; did you mean ${meant}?\n${SHELL_USAGE}`);
});

it("lets Chromium's and Electron's own switches pass, and values that only look like flags", () => {
  const argv = ['/usr/lib/tilstand/tilstand', '/usr/lib/tilstand/resources/app.asar', '--no-sandbox', '--enable-logging', '--js-flags=--max-semi-space-size=16', '--disable-gpu', '--lang=nb', '--v=1', '--inspect=9229', '--remote-debugging-port=9222', '--user-data-dir=/tmp/u', '--start-fullscreen', '--kiosk-printing', '--ozone-platform=wayland', '--data=--dat', '--http-port', '18470'];
  expect(parseShellArgs(argv)).toMatchObject({ httpPort: 18470, data: expect.stringMatching(/\/--dat$/), kiosk: false, fullscreen: false });
});
