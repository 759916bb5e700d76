// The `memory:` start-up lines of a site started without its launch settings (start.ts
// `memoryLines`): what it costs, as measured, and the command that starts it with them, ready to
// type. A unit test of the lines; start.e2e.test.ts sees them in a real start.
import { describe, expect, it } from 'vitest';
import { memoryLines } from './start.ts';
import { missingLaunchSettings } from '../v8-flags.ts';

const cwd = '/srv/tilstand';
const demo = { execArgv: [], script: '/srv/tilstand/dist/site/tilstand.mjs', args: ['start', '--demo', '--data', 'demo-data'], cwd };

describe('memoryLines', () => {
  it('says nothing for a process started with the settings', () => {
    expect(memoryLines([], demo, 'linux')).toEqual([]);
  });

  it('gives the measured figure and the command that starts the same process with them (env before node, flags after)', () => {
    const lines = memoryLines(missingLaunchSettings([], {}, 'linux'), demo, 'linux');
    expect(lines[0]).toBe('  memory:  started without --max-semi-space-size=8 MALLOC_ARENA_MAX=2: a higher peak RSS (measured on a 1 M-row site: 278 MB with neither, 231 MB with both; docs/operations.md, "Memory settings")');
    expect(lines[1]).toBe('           start it with them (as `npm start` does): MALLOC_ARENA_MAX=2 node --max-semi-space-size=8 dist/site/tilstand.mjs start --demo --data demo-data');
    expect(lines).toHaveLength(2);
  });

  it('names only what is missing, keeps the node flags the process had, and quotes what a shell would split', () => {
    const lines = memoryLines(['MALLOC_ARENA_MAX=2'], { ...demo, execArgv: ['--inspect'], args: ['start', '--data', "Site's data"] }, 'linux');
    expect(lines[1]).toBe(`           start it with them (as \`npm start\` does): MALLOC_ARENA_MAX=2 node --inspect dist/site/tilstand.mjs start --data 'Site'\\''s data'`);
  });

  it('keeps a script outside the working directory as its full path', () => {
    const lines = memoryLines(['--max-semi-space-size=8'], { ...demo, cwd: '/home/ada' }, 'linux');
    expect(lines[1]).toMatch(/: node --max-semi-space-size=8 \/srv\/tilstand\/dist\/site\/tilstand\.mjs start --demo --data demo-data$/);
  });

  it('on Windows: no glibc setting asked for, its paths as typed there', () => {
    const missing = missingLaunchSettings([], {}, 'win32');
    const lines = memoryLines(missing, { execArgv: [], script: 'C:\\tilstand\\dist\\site\\tilstand.mjs', args: ['start', '--data', 'C:\\site data'], cwd: 'C:\\tilstand' }, 'win32');
    expect(lines[0]).toContain('started without --max-semi-space-size=8: a higher peak RSS');
    // path.relative is the POSIX one here: the script stays whole, as typed there.
    expect(lines[1]).toMatch(/: node --max-semi-space-size=8 \S+tilstand\.mjs start --data "C:\\site data"$/);
  });
});
