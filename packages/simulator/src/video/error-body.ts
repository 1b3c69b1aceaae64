/**
 * Section 7 of the reference: "An error body is a JSON object with required `meta`, containing `status`
 * (integer), `code` (string), `title` (string), `message` (string), `description` (string), `links` (array)."
 * The meaning of `meta.code` values is not shown; the codes below follow the service's `ERR-<status>-<Name>`
 * style.
 */

export interface ErrorBody {
  meta: { status: number; code: string; title: string; message: string; description: string; links: unknown[] };
}

export type VideoErrorName = 'unauthorized' | 'forbidden' | 'not_found' | 'no_route' | 'gone' | 'invalid' | 'rate_limited' | 'internal';

const CATALOGUE: Record<VideoErrorName, { status: number; code: string; title: string }> = {
  unauthorized: { status: 401, code: 'ERR-401-InvalidToken', title: 'Invalid Token Error' },
  forbidden: { status: 403, code: 'ERR-403-RecordUnaccessible', title: 'Record Unaccessible Error' },
  not_found: { status: 404, code: 'ERR-404-RecordNotFound', title: 'Record Not Found Error' },
  no_route: { status: 404, code: 'ERR-404-RouteNotFound', title: 'Route Not Found Error' },
  gone: { status: 410, code: 'ERR-410-RecordDeleted', title: 'Record Deleted Error' },
  invalid: { status: 422, code: 'ERR-422-RecordInvalid', title: 'Record Invalid Error' },
  rate_limited: { status: 429, code: 'ERR-429-TooManyRequests', title: 'Too Many Requests Error' },
  internal: { status: 500, code: 'ERR-500-InternalServerError', title: 'Internal Server Error' },
};

export function errorBody(name: VideoErrorName, message: string): { status: number; body: ErrorBody } {
  const { status, code, title } = CATALOGUE[name];
  return { status, body: { meta: { status, code, title, message, description: message, links: [] } } };
}
