import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a server that can be taken down and brought back on the same port: `cut()` resets
 * every connection in flight and refuses new ones (nothing listens), `restore()` listens again. What the exporter
 * meets when a Wowza host goes down mid-poll and comes back.
 */
export interface OutageProxy {
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startOutageProxy(target: string): Promise<OutageProxy> {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(Number(targetPort), hostname);
        for (const sock of [client, upstream]) {
          sockets.add(sock);
          sock.on('close', () => sockets.delete(sock));
          sock.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  const cut = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    const closed = new Promise<void>((r) => s.close(() => r()));
    for (const sock of sockets) sock.resetAndDestroy();
    await closed;
  };
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    cut,
    restore: listen,
    close: cut,
  };
}
