// `--data` given without its directory, another flag next (`tilstand-electron --data --kiosk`, a
// launcher's path left empty): the shell took the flag as the directory — it opened, or made, a
// data directory named `--kiosk` in the working directory (the first-run screen, on a real site's
// PC) and ran without kiosk mode. `tilstand start` refuses the same, naming what it expected.
import { expect, it } from 'vitest';
import { parseShellArgs, ShellArgsError } from './main-process.ts';

it('refuses a flag where --data expects a directory, naming both', () => {
  expect(() => parseShellArgs(['--data', '--kiosk'])).toThrow(ShellArgsError);
  expect(() => parseShellArgs(['--data', '--kiosk'])).toThrow("--data: expected a directory, got the option '--kiosk' (write --data=--kiosk if that is the value)");
  expect(() => parseShellArgs(['--data', '--no-sandbox', '--demo'])).toThrow(/--data: expected a directory, got the option '--no-sandbox'/);
  // A directory given with `=` is taken as written, and one that only starts with a dash too.
  expect(parseShellArgs(['--data=--kiosk']).data).toMatch(/\/--kiosk$/);
  expect(parseShellArgs(['--data', '-odd', '--kiosk'])).toMatchObject({ data: expect.stringMatching(/\/-odd$/), kiosk: true });
});
