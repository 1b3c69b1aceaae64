import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

/**
 * DNS rebinding: a page on `evil.example`, whose name is then made to resolve to the exporter, sends its requests
 * with `Host: evil.example` and is same-origin to the browser, so neither Sec-Fetch-Site nor Origin gives it away.
 * The Host header does: a state-changing request is taken only when it names the exporter as its operators do, by
 * a listen address, localhost, or a name they configured (web.allowed_hosts).
 *
 * Ports are not compared: a rebinding page's requests carry the exporter's own port, so a port check adds nothing,
 * and a port mapping (docker -p 9000:9935) would refuse the operator's own requests.
 */

const LOOPBACK = ['localhost', '127.0.0.1', '::1'];

/** The host of a Host header (`name`, `name:port`, `[v6]:port`), lower case, brackets and port removed; undefined when malformed. */
export function hostOfHeader(header: string): string | undefined {
  const h = header.trim().toLowerCase();
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/.exec(h);
  if (!m) return undefined;
  const host = (m[1] ?? m[2]!).replace(/\.$/, '');
  return host === '' ? undefined : host;
}

/** A configured name or IP as it is compared: lower case, no brackets, no trailing dot. */
export function normaliseHost(name: string): string {
  return name.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/** `::ffff:10.0.0.5`, as a dual-stack socket reports an IPv4 peer, is 10.0.0.5. */
const plainAddress = (a: string | undefined) => (a?.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a)?.toLowerCase();

export class AllowedHosts {
  private readonly names: ReadonlySet<string>;

  /** `listenHosts`: the hosts of the listen addresses (wildcards are covered by each connection's own address). */
  constructor(listenHosts: readonly string[], configured: readonly string[]) {
    this.names = new Set([...LOOPBACK, ...listenHosts, ...configured].map(normaliseHost).filter((h) => h !== '' && h !== '0.0.0.0' && h !== '::'));
  }

  /** Why the request's Host is not one of the exporter's own, or undefined when it is (or absent: no browser sends none). */
  refusal(req: IncomingMessage): string | undefined {
    const header = req.headers.host;
    if (header === undefined) return undefined;
    const host = hostOfHeader(header);
    if (host !== undefined && (this.names.has(host) || host === plainAddress(req.socket.localAddress))) return undefined;
    return `Host ${JSON.stringify(header.slice(0, 100))} is not a name of this exporter (a listen address, localhost, or one of web.allowed_hosts / --web.allowed-hosts)`;
  }
}
