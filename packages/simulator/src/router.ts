import type { IncomingHttpHeaders } from 'node:http';
import type { Reply } from './reply.js';

/** What a route handler sees of a request. */
export interface RequestContext {
  method: string;
  /** The path without the query. */
  path: string;
  /** Decoded values of the template's `{name}` segments. */
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The request body (bounded), for routes that take one. */
  readBody(): Promise<Buffer>;
}

export type RouteHandler = (ctx: RequestContext) => Reply | Promise<Reply>;

export interface Route {
  method: string;
  /** `/v2/servers/{server}/vhosts/{vhost}/monitoring/current`: also the counters' and faults' key. */
  template: string;
  handler: RouteHandler;
}

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  /** The path exists for other methods. */
  | { kind: 'method'; template: string; allowed: string[] }
  | { kind: 'none' };

export class BadPathError extends Error {}

interface Compiled {
  route: Route;
  segments: Array<{ param: string } | { literal: string }>;
  literals: number;
}

const split = (path: string) => path.replace(/\/+$/, '').split('/').slice(1);

/** Template routes. New resources (webhooks, configuration) register here without touching the pipeline. */
export class Router {
  private readonly routes: Compiled[] = [];

  add(method: string, template: string, handler: RouteHandler): this {
    const m = method.toUpperCase();
    if (this.routes.some((r) => r.route.method === m && r.route.template === template)) throw new Error(`route ${m} ${template} is already registered`);
    const segments = split(template).map((s) => {
      const p = /^\{(\w+)\}$/.exec(s);
      return p ? { param: p[1]! } : { literal: s };
    });
    this.routes.push({ route: { method: m, template, handler }, segments, literals: segments.filter((s) => 'literal' in s).length });
    return this;
  }

  /** `GET /v2/...` for every route. */
  keys(): string[] {
    return this.routes.map((r) => `${r.route.method} ${r.route.template}`);
  }

  /** Throws BadPathError for a path whose escapes cannot be decoded. */
  match(method: string, path: string): RouteMatch {
    const parts = split(path);
    let best: { c: Compiled; params: Record<string, string> } | undefined;
    const allowed = new Map<string, string[]>();
    for (const c of this.routes) {
      if (c.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const seg = c.segments[i]!;
        if ('literal' in seg) ok = seg.literal === parts[i];
        else params[seg.param] = decode(parts[i]!);
      }
      if (!ok) continue;
      if (c.route.method !== method.toUpperCase()) {
        allowed.set(c.route.template, [...(allowed.get(c.route.template) ?? []), c.route.method]);
        continue;
      }
      // The most literal template wins (`/logs/current` over `/logs/{logType}` if both exist).
      if (!best || c.literals > best.c.literals) best = { c, params };
    }
    if (best) return { kind: 'found', route: best.c.route, params: best.params };
    const [template, methods] = [...allowed.entries()][0] ?? [];
    if (template && methods) return { kind: 'method', template, allowed: methods };
    return { kind: 'none' };
  }
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new BadPathError(`malformed escape in path segment "${segment}"`);
  }
}
