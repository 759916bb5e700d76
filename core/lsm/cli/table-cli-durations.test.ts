// The command line's durations (`tag create --retain`, `expire --orphans-older-than`) read what a
// table's duration options read (Java's TimeUtils: '7 d', '90 min', '12 hours'), besides their own
// compact forms ('7d', '1h30m', '1w'). Before, '7 d' worked in 'tag.default-time-retained' and was
// refused by `--retain`, and '1h30m' the other way round: a user had two grammars to remember.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDuration as parseOption } from '../options.ts';
import { runCli } from '../testing/cli.ts';
import { runTableCli } from './table-cli.ts';
import { parseDuration } from './values.ts';

const H = 3_600_000;
const D = 24 * H;

describe('a command-line duration', () => {
  it('takes every form a duration option takes, with the same meaning', () => {
    for (const text of ['7 d', '7 days', '7D', '90 min', '90 minutes', '12 hours', '30 s', '2 seconds', '500 ms', '1500 \u00b5s', '1.5 h', '5 mins', ' 3h ', '7d', '30m', '45s']) {
      expect(parseDuration(text, 'retain'), text).toBe(parseOption(text, 'x'));
    }
  });

  it('keeps its own compact forms', () => {
    expect(parseDuration('1h30m', 'retain')).toBe(90 * 60_000);
    expect(parseDuration('1w', 'retain')).toBe(7 * D);
    expect(parseDuration('2w3d', 'retain')).toBe(17 * D);
    expect(parseDuration('1.5h', 'retain')).toBe(1.5 * H);
    expect(parseDuration('0', 'orphans-older-than')).toBe(0);
  });

  it('refuses a number without a unit other than 0, naming the option and the form expected', () => {
    // To a table option '7' is 7 ms: a tag kept 7 ms where 7 days was meant is refused instead.
    expect(() => parseDuration('7', 'retain')).toThrow("option '--retain': a number without a unit is milliseconds to a table option; write the unit, such as '7d', '7 d' or '7 ms', got '7'");
  });

  it('refuses anything else naming the option and both forms', () => {
    for (const text of ['soon', '', '7 weeks', '1h 30m', '-1d', '7x']) {
      expect(() => parseDuration(text, 'orphans-older-than'), text).toThrow(
        `option '--orphans-older-than': expected a duration such as 7d, 12h, 30m, 1h30m or 1w, or as a table option takes it ('7 d', '90 min', '12 hours'), got '${text}'`,
      );
    }
  });

  it('refuses a duration too long to count in milliseconds', () => {
    expect(() => parseDuration('99999999999999999999d', 'retain')).toThrow(/option '--retain': .* too long/);
  });
});

describe('tilstand table with durations as the table options write them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-durations-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const W = ['--warehouse', join(dir, 'warehouse')];
  const table = (args: string[], stdin = '') => runCli(runTableCli, [...args, ...W], stdin);

  beforeAll(async () => {
    const schema = join(dir, 'kv.json');
    writeFileSync(schema, JSON.stringify({ fields: [{ name: 'k', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } }));
    expect((await table(['create', 'd.kv', '--schema', schema])).code).toBe(0);
    expect((await table(['put', 'd.kv'], '{"k":"a"}')).code).toBe(0);
  });

  it("tag create --retain '7 days'", async () => {
    const r = await table(['tag', 'create', 'd.kv', 'week', '--retain', '7 days']);
    expect([r.code, r.err]).toEqual([0, '']);
    const [t] = JSON.parse((await table(['tags', 'd.kv', '--json'])).out) as { retainedMillis: number }[];
    expect(t!.retainedMillis).toBe(7 * D);
  });

  it("expire --orphans-older-than '2 hours'", async () => {
    const r = await table(['expire', 'd.kv', '--orphans-older-than', '2 hours']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(JSON.parse(r.out)).toMatchObject({ orphanFilesRemoved: 0 });
  });
});
