/**
 * Webhook filter criteria as the reference describes them (wse-rest-api.md, section 2 "Webhooks", Filter):
 * "dot-separated subject pattern; tokens `*` and `>` are used as wildcards", observed as
 * `vHost.<v>.app.<a>.appInstance.<i>.stream.<s>.state.<state>` and shorter prefixes ending in `>`.
 *
 * Matching is token by token, as in the subject-based messaging the syntax comes from (NATS: `*` matches exactly
 * one token, `>` one or more to the end): an event's subject is its context joined with dots, so a stream named
 * `cam1.sdp` is two tokens that `stream.*` does not match, and an application event, which has no stream, has
 * no `stream` part at all. That is why the exporter's default is `vHost.>`.
 */

/** What an event is matched on; absent parts are left out of the subject. */
export interface EventSubject {
  vHost?: string;
  app?: string;
  appInstance?: string;
  stream?: string;
  state?: string;
}

export interface Criteria {
  readonly text: string;
  readonly tokens: readonly string[];
}

export type CriteriaParse = { ok: true; criteria: Criteria } | { ok: false; message: string };

const SUBJECT_KEYS = ['vHost', 'app', 'appInstance', 'stream', 'state'] as const;

export function parseCriteria(text: string): CriteriaParse {
  const fail = (why: string): CriteriaParse => ({
    ok: false,
    message: `invalid criteria "${text}": ${why} (dot-separated tokens, * for one token, > for the rest, e.g. vHost.*.app.live.>)`,
  });
  if (text.trim() === '') return fail('it is empty');
  const tokens = text.split('.');
  if (tokens.some((t) => t === '')) return fail('it has an empty token (two dots in a row, or a dot at an end)');
  if (tokens.slice(0, -1).includes('>')) return fail('">" must be the last token');
  const partial = tokens.find((t) => t !== '*' && t !== '>' && (t.includes('*') || t.includes('>')));
  if (partial !== undefined) return fail(`wildcards stand for whole tokens, not part of "${partial}"`);
  return { ok: true, criteria: { text, tokens } };
}

/** The subject an event is matched against: `vHost.<v>.app.<a>...state.<s>`, present parts only. */
export function subjectTokens(s: EventSubject): string[] {
  const out: string[] = [];
  for (const key of SUBJECT_KEYS) {
    const value = s[key];
    if (value === undefined || value === '') continue;
    out.push(key, ...value.split('.'));
  }
  return out;
}

export function criteriaMatch(c: Criteria, subject: EventSubject): boolean {
  const tokens = subjectTokens(subject);
  for (let i = 0; i < c.tokens.length; i++) {
    const p = c.tokens[i]!;
    if (p === '>') return tokens.length > i;
    if (i >= tokens.length) return false;
    if (p !== '*' && p !== tokens[i]) return false;
  }
  return tokens.length === c.tokens.length;
}
