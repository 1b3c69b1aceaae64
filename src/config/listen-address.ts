/** `:9935`, `0.0.0.0:9935`, `[::1]:9935`, `127.0.0.1:0` -> host and port; throws saying what is wrong. */
export function parseListenAddress(addr: string): { host?: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*))?:(\d+)$/.exec(addr.trim());
  if (!m) throw new Error(`invalid listen address "${addr}": expected [host]:port, e.g. :9935 or 127.0.0.1:9935`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid listen address "${addr}": port out of range`);
  const host = m[1] ?? (m[2] || undefined);
  return { host, port };
}
