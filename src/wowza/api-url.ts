/**
 * A configured server URL may carry a path: an install behind a reverse proxy under a prefix
 * (`https://proxy.example/wowza-7` serves `/wowza-7/v2/...`). The path is the API's base, kept everywhere the URL is
 * used (requests, target files, probes, the default server label), never dropped; a URL without a path is the root.
 */

/** The path of a configured URL as the API's base: without trailing slashes, '' for the root. */
export function basePath(u: URL): string {
  return u.pathname.replace(/\/+$/, '');
}

/** The API's base of a configured URL: its origin and base path. */
export function apiBase(u: URL): string {
  return `${u.origin}${basePath(u)}`;
}

/** The URL of a REST API path (`/v2/...`) under a configured URL's base. */
export function apiUrl(configured: string | URL, path: string): URL {
  const base = typeof configured === 'string' ? new URL(configured) : configured;
  return new URL(`${basePath(base)}${path}`, base.origin);
}
