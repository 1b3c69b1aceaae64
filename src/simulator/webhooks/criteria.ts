/**
 * Webhook filter criteria: `vHost.<v>.app.<a>.appInstance.<i>.stream.<s>.state.<state>`, where a value
 * of `*` matches any one value and `>` matches everything from there on (`vHost.*.app.live.>`).
 *
 * Values are matched whole, not token by token: stream names often hold dots (`cam1.sdp`), so a literal
 * value runs up to the next keyword (`...stream.cam1.sdp.state.*`).
 */

export const CRITERIA_KEYS = ['vHost', 'app', 'appInstance', 'stream', 'state'] as const;
export type CriteriaKey = (typeof CRITERIA_KEYS)[number];

/** What an event is matched on; an absent value (an application event has no stream) matches only `*` and `>`. */
export type EventSubject = Partial<Record<CriteriaKey, string>>;

type ValuePattern = { any: true } | { any: false; literal: string };

export interface Criteria {
  readonly text: string;
  /** One pattern per key, in order, up to where `>` took the rest. */
  readonly values: readonly ValuePattern[];
}

export type CriteriaParse = { ok: true; criteria: Criteria } | { ok: false; message: string };

const FORM = 'vHost.<v>.app.<a>.appInstance.<i>.stream.<s>.state.<state>, with * for one value and > for the rest';

export function parseCriteria(text: string): CriteriaParse {
  const fail = (why: string): CriteriaParse => ({ ok: false, message: `invalid criteria "${text}": ${why} (expected ${FORM})` });
  if (text.trim() === '') return fail('it is empty');
  const tokens = text.split('.');
  if (tokens.some((t) => t === '')) return fail('it has an empty part (two dots in a row, or a dot at an end)');
  const values: ValuePattern[] = [];
  let i = 0;
  for (let k = 0; i < tokens.length; k++) {
    if (tokens[i] === '>') {
      if (i !== tokens.length - 1) return fail('">" must be the last part');
      return { ok: true, criteria: { text, values } };
    }
    const key = CRITERIA_KEYS[k];
    if (key === undefined) return fail(`unexpected "${tokens.slice(i).join('.')}" after the state`);
    if (tokens[i] !== key) return fail(`expected "${key}" at part ${i + 1}, got "${tokens[i]}"`);
    i++;
    if (i >= tokens.length) return fail(`"${key}" needs a value`);
    if (tokens[i] === '>') continue; // handled at the top of the loop
    if (tokens[i] === '*') {
      values.push({ any: true });
      i++;
      continue;
    }
    const next = CRITERIA_KEYS[k + 1];
    let end = i + 1;
    while (end < tokens.length && tokens[end] !== next && tokens[end] !== '>') end++;
    const parts = tokens.slice(i, end);
    if (parts.includes('*')) return fail(`"*" stands for a whole value, not part of "${parts.join('.')}"`);
    values.push({ any: false, literal: parts.join('.') });
    i = end;
  }
  if (values.length < CRITERIA_KEYS.length) return fail(`it ends before "${CRITERIA_KEYS[values.length]}"; end it with > to match the rest`);
  return { ok: true, criteria: { text, values } };
}

export function criteriaMatch(c: Criteria, subject: EventSubject): boolean {
  return c.values.every((p, k) => p.any || subject[CRITERIA_KEYS[k]!] === p.literal);
}
