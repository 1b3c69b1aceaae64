import type { Agent as UndiciAgent, Dispatcher } from 'undici';
import AgentModule from 'undici/lib/dispatcher/agent.js';
import requestModule from 'undici/lib/api/api-request.js';

/**
 * undici's `Agent` and `request()`, loaded without the rest of undici. `import 'undici'` evaluates all of it
 * (fetch, WebSocket, EventSource, caches, mocks, proxies): about 10 MB more resident memory in the exporter for
 * code it never runs, on a budget of 120 MB (issue 16, bench/RESULTS.md). These are the two modules undici's own
 * index re-exports them from; the version is pinned by package-lock.json, and test/unit/undici-core.test.ts
 * fails if a new undici moves them. Types come from undici's published declarations.
 */
export const Agent: typeof UndiciAgent = AgentModule;
export type Agent = UndiciAgent;

export type RequestInit = Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  dispatcher: Dispatcher;
  method?: Dispatcher.HttpMethod;
};

/** undici's `request(url, options)`: the URL split into origin and path as its index does it. */
export function request(url: URL | string, init: RequestInit): Promise<Dispatcher.ResponseData> {
  const u = typeof url === 'string' ? new URL(url) : url;
  const { dispatcher, ...options } = init;
  return requestModule.call(dispatcher, {
    ...options,
    origin: u.origin,
    path: `${u.pathname}${u.search}`,
    method: init.method ?? (init.body ? 'PUT' : 'GET'),
  });
}
