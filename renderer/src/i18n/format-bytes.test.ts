// formatBytes: SI steps as its labels say, plain bytes in words with the plural the language wants.
import { describe, expect, it } from 'vitest';
import { formatBytes } from './messages.ts';

describe('formatBytes', () => {
  it('says bytes in words, with the right plural, below a kilobyte', () => {
    expect(formatBytes('en', 0)).toBe('0 bytes'); // the short form would say "0 byte"
    expect(formatBytes('en', 1)).toBe('1 byte');
    expect(formatBytes('en', 999)).toBe('999 bytes');
    expect(formatBytes('de', 0)).toBe('0 Byte');
    expect(formatBytes('nb', 0)).toBe('0 byte'); // the short form would say "0 B"
  });

  it('steps by 1,000, as kB, MB and GB mean', () => {
    expect(formatBytes('en', 1000)).toBe('1 kB');
    expect(formatBytes('en', 8_800)).toBe('8.8 kB');
    expect(formatBytes('en', 17_700)).toBe('17.7 kB');
    expect(formatBytes('en', 1_500_000)).toBe('1.5 MB');
    expect(formatBytes('en', 2_000_000_000)).toBe('2 GB');
    expect(formatBytes('de', 8_800)).toBe('8,8 kB');
    // Never "1,000 kB": a value that rounds up to the next unit is shown in it.
    expect(formatBytes('en', 999_960)).toBe('1 MB');
  });
});
