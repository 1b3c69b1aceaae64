import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerFor, DEFAULT_TOPOLOGY, ENDPOINT_NAMES, ENDPOINTS, type AnswerMode, type AnswerVars, type Endpoint, type OfficialTopology } from './swagger-models.js';

/**
 * A loopback WSE REST API that answers only what the server's own Swagger models describe (swagger-models.ts),
 * in one mode, as JSON, under MODELS.md's paths, with Basic auth. Unlike the simulator it has no opinions of its
 * own: it is the check that the exporter reads the official shapes, not the simulator's.
 *
 * One object can be made to fail on its own (a 500, or a body that is not JSON), as one stream's statistics
 * do on real servers while its neighbours answer (wowza-api.md).
 */

/** A status to answer with (and the Wowza error body), or 'garbage': 200 with a body that is not JSON. */
export type Failure = number | 'garbage';

export interface OfficialAnswersServer {
  readonly url: string;
  readonly username: string;
  readonly password: string;
  /** Changes show in the next answer. */
  mode: AnswerMode;
  topology: OfficialTopology;
  /**
   * Makes requests of `path` (decoded, without the query) fail with `behaviour`, for the next `times` requests
   * or until cleared; replaces an earlier failure of the path. Returns the function that clears it.
   */
  failObject(path: string, behaviour: Failure, opts?: { times?: number }): () => void;
  clearFailures(): void;
  /** Requests of `path` (decoded, without the query) so far, failed ones and 401s included. */
  requests(path: string): number;
  close(): Promise<void>;
}

export interface OfficialAnswersOptions {
  mode: AnswerMode;
  username?: string;
  password?: string;
  topology?: OfficialTopology;
}

const WOWZA_SERVER = '4.9.0';

interface Compiled {
  endpoint: Endpoint;
  segments: Array<{ param: keyof AnswerVars } | { literal: string }>;
}

const ROUTES: Compiled[] = ENDPOINT_NAMES.map((endpoint) => ({
  endpoint,
  segments: ENDPOINTS[endpoint].path
    .split('/')
    .slice(1)
    .map((s) => {
      const p = /^\{(\w+)\}$/.exec(s);
      return p ? { param: p[1] as keyof AnswerVars } : { literal: s };
    }),
}));

function route(path: string): { endpoint: Endpoint; vars: AnswerVars } | undefined {
  const parts = path.replace(/\/+$/, '').split('/').slice(1);
  for (const r of ROUTES) {
    if (r.segments.length !== parts.length) continue;
    const vars: Record<string, string> = {};
    const ok = r.segments.every((seg, i) => ('literal' in seg ? seg.literal === parts[i] : ((vars[seg.param] = parts[i]!), true)));
    if (ok) return { endpoint: r.endpoint, vars };
  }
  return undefined;
}

const errorBody = (status: number, message: string) => JSON.stringify({ success: false, message, code: String(status), data: null, wowzaServer: WOWZA_SERVER });

export async function startOfficialAnswers(opts: OfficialAnswersOptions): Promise<OfficialAnswersServer> {
  const username = opts.username ?? 'admin';
  const password = opts.password ?? 'official-answers';
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const failures = new Map<string, { behaviour: Failure; left: number }>();
  const counts = new Map<string, number>();
  const state = { mode: opts.mode, topology: opts.topology ?? DEFAULT_TOPOLOGY };

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', 'content-length': Buffer.byteLength(body), server: `WowzaStreamingEngine/${WOWZA_SERVER}`, ...headers });
    res.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    let path: string;
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      return send(res, 400, errorBody(400, 'Malformed path'));
    }
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (req.headers.authorization !== expected) return send(res, 401, errorBody(401, 'Unauthorized'), { 'www-authenticate': 'Basic realm="Wowza"' });
    if (req.method !== 'GET') return send(res, 405, errorBody(405, `Method ${req.method} not allowed`));

    const failure = failures.get(path);
    if (failure) {
      if (--failure.left <= 0) failures.delete(path);
      // Truncated JSON under a JSON content type: what a proxy cutting a body short delivers.
      if (failure.behaviour === 'garbage') return send(res, 200, '{"serverName":"_defaultServer_","bytesIn":12<html><body>Bad Gateway');
      return send(res, failure.behaviour, errorBody(failure.behaviour, 'java.lang.NullPointerException'));
    }

    const matched = route(path);
    const body = matched && answerFor(matched.endpoint, state.mode, { ...matched.vars, topology: state.topology });
    if (!body) return send(res, 404, errorBody(404, `Resource (${path}) not found.`));
    send(res, 200, JSON.stringify(body));
  };

  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handle(req, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    username,
    password,
    get mode() {
      return state.mode;
    },
    set mode(m: AnswerMode) {
      state.mode = m;
    },
    get topology() {
      return state.topology;
    },
    set topology(t: OfficialTopology) {
      state.topology = t;
    },
    failObject(path, behaviour, o = {}) {
      const entry = { behaviour, left: o.times ?? Infinity };
      failures.set(path, entry);
      return () => {
        if (failures.get(path) === entry) failures.delete(path);
      };
    },
    clearFailures: () => failures.clear(),
    requests: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
