/**
 * Who may do what. Section 5 of the reference: "An access token ... is needed for API access. The scheme and
 * the name of the header that carries it: not shown." docs/wowza-api-notes.md: `Authorization: Bearer <JWT>`. A
 * missing or wrong token is 401; a read-only token (one way to reach the 403 section 4 documents for PATCH)
 * may read, and is refused (403) for PATCH and DELETE.
 */

export type Access = 'allowed' | 'unauthorized' | 'forbidden';

export interface Tokens {
  token: string;
  readOnlyToken?: string;
}

export function access(authorization: string | undefined, method: string, tokens: Tokens): Access {
  if (authorization === `Bearer ${tokens.token}`) return 'allowed';
  if (tokens.readOnlyToken !== undefined && authorization === `Bearer ${tokens.readOnlyToken}`) return method === 'GET' ? 'allowed' : 'forbidden';
  return 'unauthorized';
}
