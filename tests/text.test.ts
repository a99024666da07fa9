/**
 * shared/text.ts: every fixed-length cut of the chapters goes through head, tail or keepEnds, so a
 * cut never leaves half of a two-unit character (an emoji) that the real API would refuse.
 */
import { describe, expect, it } from 'vitest';
import { head, keepEnds, tail } from '../shared/text.ts';

const smile = '\u{1F600}'; // two UTF-16 code units: '\ud83d\ude00'

describe('shared/text.ts', () => {
  it('head keeps n code units, or n - 1 where the nth is the first half of a pair', () => {
    expect(head(`ab${smile}c`, 3), 'would end inside the emoji').toBe('ab');
    expect(head(`ab${smile}c`, 4), 'ends right after it').toBe(`ab${smile}`);
    expect(head('abc', 10), 'shorter than n: unchanged').toBe('abc');
  });

  it('tail keeps n code units, or n - 1 where the first is the second half of a pair', () => {
    expect(tail(`a${smile}bc`, 3), 'would start inside the emoji').toBe('bc');
    expect(tail(`a${smile}bc`, 4), 'starts right at it').toBe(`${smile}bc`);
    expect(tail('abc', 10)).toBe('abc');
  });

  it('keepEnds keeps both ends, says how much it cut, and leaves short text alone', () => {
    expect(keepEnds('abcdefghij', 4)).toBe('ab\n… (6 characters cut) …\nij');
    expect(keepEnds(`a${smile}${'-'.repeat(10)}${smile}b`, 4)).toBe('a\n… (12 characters cut) …\nb');
    expect(keepEnds('short', 10)).toBe('short');
  });
});
