import { describe, expect, it } from 'vitest';
import { escapeControlCharacters, escapeControlCharactersButNewlines, escapeJsonControlCharacters, stringifyJsonSafely } from '../../src/base/control-characters.js';

describe('control characters', () => {
  it('are escaped visibly for a terminal, tab kept', () => {
    expect(escapeControlCharacters('a\tb\x1b]52;c;x\x07\r\n\x7f\u0085\u009b\u202e\u2066z')).toBe('a\tb\\x1b]52;c;x\\x07\\x0d\\x0a\\x7f\\x85\\x9b\\u202e\\u2066z');
    expect(escapeControlCharactersButNewlines('one\ntwo\x1b[2J')).toBe('one\ntwo\\x1b[2J');
    expect(escapeControlCharacters('héllo 東京 ✓ 📉 \u200e')).toBe('héllo 東京 ✓ 📉 \u200e');
  });

  it('in JSON: valid, the same value, and nothing a terminal acts on', () => {
    const value = { 'k\u009b': 'v\x1b\u0085\u202e\u2069\x7f' };
    const text = stringifyJsonSafely(value);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.parse(text)).toEqual(value);
    expect(escapeJsonControlCharacters('"\u202e"')).toBe('"\\u202e"');
  });
});
