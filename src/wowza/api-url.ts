/**
 * The URL of a REST API path (`/v2/...`) for a server whose configured URL may carry a path: an install behind a
 * reverse proxy under a prefix (`https://proxy.example/wowza-7` serves `/wowza-7/v2/...`). The prefix is kept, never
 * dropped, so the exporter asks the server it was pointed at; a URL without a path is the API's root as before.
 */
export function apiUrl(configured: string | URL, path: string): URL {
  const base = typeof configured === 'string' ? new URL(configured) : configured;
  const prefix = base.pathname.replace(/\/+$/, '');
  return new URL(`${prefix}${path}`, base.origin);
}
