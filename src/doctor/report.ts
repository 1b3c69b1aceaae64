import { escapeControlCharacters } from '../base/control-characters.js';

/** One line of the doctor's report. */
export interface CheckResult {
  /** Short name: `dns`, `tcp`, `tls`, `http`, `auth`, `content-type`, `version`, `discovery`, `cost`, `logs`. */
  check: string;
  status: 'pass' | 'fail' | 'warn';
  /** What was found, one sentence. */
  message: string;
  /** What to do about it, one sentence (fail and warn only). */
  fix?: string;
  /** Machine-readable facts for --json. */
  details?: Record<string, unknown>;
}

const MARK = { pass: '✔', fail: '✖', warn: '!' } as const;

/** For a terminal: messages quote what servers answer, whose control characters are shown, not acted on. */
export function formatResult(r: CheckResult): string {
  return `${MARK[r.status]} ${r.check}: ${escapeControlCharacters(r.message)}${r.fix ? `\n    → ${escapeControlCharacters(r.fix)}` : ''}`;
}
