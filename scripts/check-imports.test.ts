import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileTrees } from './test-tree.ts';
// @ts-expect-error plain ESM script without types
import { checkTree } from './check-imports.mjs';

const tree = fileTrees('imports-');

describe('import rule', () => {
  it('accepts imports with the grain', () => {
    const root = tree({
      'core/lsm/a.ts': "import { x } from './b';\nimport { readFileSync } from 'node:fs';",
      'core/lsm/b.ts': 'export const x = 1;',
      'core/ingest/c.ts': "import { x } from '../lsm/b';",
      'renderer/app.tsx': "import type { X } from '../core/site/api';\nimport React from 'react';",
    });
    expect(checkTree(root)).toEqual([]);
  });

  it('refuses core/lsm importing another core folder', () => {
    const root = tree({ 'core/lsm/a.ts': "import { y } from '../ingest/y';", 'core/ingest/y.ts': '' });
    expect(checkTree(root)).toEqual([expect.stringContaining('core/lsm must not import core/ingest')]);
  });

  it('refuses core importing electron, react or the DOM', () => {
    const root = tree({
      'core/site/a.ts': "import { app } from 'electron';",
      'core/agents/b.ts': "export { useState } from 'react';",
      'core/inbox/c.ts': '/// <reference lib="dom" />\nexport {};',
    });
    const v = checkTree(root);
    expect(v).toHaveLength(3);
    expect(v.join('\n')).toMatch(/electron/);
    expect(v.join('\n')).toMatch(/react/);
    expect(v.join('\n')).toMatch(/DOM/);
  });

  it('refuses renderer importing node built-ins or core values', () => {
    const root = tree({
      'renderer/a.ts': "import { readFileSync } from 'node:fs';\nimport path from 'path';",
      'renderer/b.ts': "import { site } from '../core/site/api';",
    });
    const v = checkTree(root);
    expect(v).toHaveLength(3);
    expect(v.join('\n')).toMatch(/only types from core/);
  });

  it('lets electron import only core/site', () => {
    const root = tree({ 'electron/main.ts': "import { a } from '../core/site/api';\nimport { t } from '../core/lsm/table';" });
    expect(checkTree(root)).toEqual([expect.stringContaining('electron may import only core/site')]);
  });

  it('refuses arrows against the grain inside core', () => {
    const root = tree({ 'core/ingest/a.ts': "import { p } from '../agents/p';", 'core/agents/p.ts': '' });
    expect(checkTree(root)).toEqual([expect.stringContaining('core/ingest must not import core/agents')]);
  });

  it('refuses app code importing a test-only file; tests and their helpers may', () => {
    const root = tree({
      'core/lsm/a.ts': "import { m } from './testing/model';\nimport { f } from './format/test-support';",
      'core/lsm/testing/model.ts': "import { f } from '../format/test-support';\nexport const m = 1;",
      'core/lsm/format/test-support.ts': 'export const f = 1;',
      'core/lsm/a.test.ts': "import { m } from './testing/model';\nimport { x } from './b.test';",
      'core/lsm/b.test.ts': 'export const x = 1;',
      'core/sync/c.ts': "import { m } from '../lsm/testing/model';",
      'renderer/src/screens/Sign.tsx': "import { h } from './testing/sign-in';",
      'renderer/src/screens/testing/sign-in.ts': "import { S } from '../Sign';",
    });
    expect(checkTree(root)).toEqual([
      "core/lsm/a.ts: app code must not import the test-only file './testing/model'",
      "core/lsm/a.ts: app code must not import the test-only file './format/test-support'",
      "core/sync/c.ts: app code must not import the test-only file '../lsm/testing/model'",
      "renderer/src/screens/Sign.tsx: app code must not import the test-only file './testing/sign-in'",
    ]);
  });

  it('refuses app code importing a package the app is not installed with; tests and their helpers may', () => {
    const pkg = JSON.stringify({ dependencies: { avsc: '1', '@aws-sdk/client-s3': '3' }, optionalDependencies: { electron: '45' }, devDependencies: { snappyjs: '0.7', vitest: '4' } });
    const root = tree({
      'package.json': pkg,
      'core/lsm/a.ts': "import x from 'avsc';\nimport { S3 } from '@aws-sdk/client-s3/dist';\nconst s = require('snappyjs');",
      'core/lsm/a.test.ts': "import { it } from 'vitest';\nimport s from 'snappyjs';",
      'core/lsm/format/test-support.ts': "import s from 'snappyjs';",
      'core/lsm/testing/model.ts': "import s from 'snappyjs';",
      'core/sync/test-support/fixture.ts': "import S from 's3rver';",
      'electron/main.ts': "import { app } from 'electron';\nimport { readFileSync } from 'node:fs';\nimport { h } from 'hyparquet';",
    });
    expect(checkTree(root)).toEqual([
      expect.stringMatching(/^core\/lsm\/a\.ts: 'snappyjs' is not in package\.json's dependencies/),
      expect.stringMatching(/^electron\/main\.ts: 'hyparquet' is not in package\.json's dependencies/),
    ]);
  });
});
