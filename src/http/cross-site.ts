import type { IncomingMessage } from 'node:http';

/** The content types an HTML form can send without a preflight: what a page on another site can make a browser POST. */
const FORM_TYPES = /^\s*(application\/x-www-form-urlencoded|multipart\/form-data|text\/plain)\b/i;

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Why a request to a state-changing endpoint looks like one a browser sent on behalf of another site, or undefined.
 * Browsers say so (`Sec-Fetch-Site`, `Origin`), and a plain HTML form can only send form content types; curl,
 * Prometheus tooling and systemd send none of these. Basic auth does not help against this: the browser resends
 * the operator's cached credentials.
 */
export function crossSiteReason(req: IncomingMessage): string | undefined {
  const site = header(req, 'sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') return `the browser says the request comes from another site (Sec-Fetch-Site: ${site})`;
  const origin = header(req, 'origin');
  if (origin !== undefined) {
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    if (host === undefined || host !== header(req, 'host')) return `Origin ${JSON.stringify(origin.slice(0, 100))} is not this exporter`;
  }
  const type = header(req, 'content-type');
  if (type !== undefined && FORM_TYPES.test(type)) return `a form content type (${type.split(';')[0]!.trim()}) is what a page on another site can send; send no body, or application/json`;
  return undefined;
}
