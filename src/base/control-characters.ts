/**
 * Escaping of the characters that let a server's text take over a terminal or mislead a reader: C0 controls (ESC
 * starts OSC 52 clipboard writes, window titles, clear-screen), DEL, C1 controls (U+009B is a one-byte CSI on many
 * terminals) and the bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), which reorder what is
 * shown. Tab is kept: log lines are tab-separated.
 */

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const CONTROLS_BUT_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves as it is: it escapes C0 itself, but not DEL, C1 or bidi. */
const LEFT_BY_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const hex = (code: number, digits: number) => code.toString(16).padStart(digits, '0');

/** `\x1b`, `\x9b` for the one-byte ones, `\u202e` for bidi: visible, and never read as the character itself. */
const visible = (c: string) => {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
};
const jsonEscape = (c: string) => `\\u${hex(c.charCodeAt(0), 4)}`;

/** Text for a terminal, as one line: every control character but tab escaped visibly (newlines too). */
export function escapeControlCharacters(text: string): string {
  return text.replace(CONTROLS, visible);
}

/** Text of several lines for a terminal (a message the program formats): as escapeControlCharacters, newlines kept. */
export function escapeControlCharactersButNewlines(text: string): string {
  return text.replace(CONTROLS_BUT_NEWLINE, visible);
}

/**
 * Serialized JSON with DEL, C1 and bidi characters written as `\uXXXX` too: still valid JSON that parses to the same
 * value, and safe to print. Those characters only occur inside strings, where `\uXXXX` means the same.
 */
export function escapeJsonControlCharacters(json: string): string {
  return json.replace(LEFT_BY_JSON, jsonEscape);
}

/** JSON.stringify, then escapeJsonControlCharacters. */
export function stringifyJsonSafely(value: unknown, space?: number): string {
  return escapeJsonControlCharacters(JSON.stringify(value, null, space));
}
