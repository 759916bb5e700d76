// CSV cells of `tilstand hq scan/diff/proposals/export --format csv` (RFC 4180), read at HQ in a
// spreadsheet: text a site wrote must not run there as a formula.
import { describe, expect, it } from 'vitest';
import { csvCell, csvLine } from './output.ts';

describe('csvCell', () => {
  it('quotes what RFC 4180 needs quoted, and leaves plain text and numbers alone', () => {
    expect(csvLine(['a', 'b,c', 'say "hi"', 'two\nlines', ' pad', 5, -5n, null, true])).toBe('a,"b,c","say ""hi""","two\nlines"," pad",5,-5,,true');
  });

  it('writes an empty text as "" and a null as nothing, so the two read apart', () => {
    expect(csvLine(['', null, 'x', undefined])).toBe('"",,x,');
  });

  it("puts a ' before text that a spreadsheet would run as a formula, not before a number", () => {
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`); // was the formula as it came
    expect(csvCell('+1+cmd')).toBe("'+1+cmd");
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\t=1')).toBe("'\t=1");
    // Numbers as text (a DECIMAL's value) and as numbers stay what they are.
    for (const n of ['-1.50', '+3', '-0.5e3', '12']) expect(csvCell(n)).toBe(n);
    expect(csvCell(-7)).toBe('-7');
    expect(csvCell('a=b')).toBe('a=b');
  });
});
