import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export interface ListenSettings {
  host: string;
  port: number;
  tls?: { cert: string | Buffer; key: string | Buffer };
}

export interface Listener {
  /** `http://127.0.0.1:43121` (wildcard hosts are shown as loopback, which is where clients reach them). */
  readonly url: string;
  readonly port: number;
  /** Stops accepting and destroys every open socket, hung or idle keep-alive alike. */
  close(): Promise<void>;
}

export class ListenError extends Error {}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** An HTTP or HTTPS server on `host:port` that can always be closed at once. */
export async function listen(settings: ListenSettings, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listener> {
  let server: Server;
  try {
    server = settings.tls ? createHttpsServer({ cert: settings.tls.cert, key: settings.tls.key }, handler) : createHttpServer(handler);
  } catch (err) {
    throw new ListenError(`invalid TLS certificate or key: ${(err as Error).message}`);
  }
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // A client that sends garbage gets its socket closed; it must not take the process down.
  server.on('clientError', (_err, socket: Socket) => socket.destroy());
  server.on('tlsClientError', (_err, socket: Socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const where = `${settings.host}:${settings.port}`;
      const why = err.code === 'EADDRINUSE' ? 'address already in use' : err.code === 'EACCES' ? 'permission denied' : err.message;
      reject(new ListenError(`cannot listen on ${where}: ${why}`));
    };
    server.once('error', onError);
    server.listen(settings.port, settings.host, () => {
      server.off('error', onError);
      resolve();
    });
  });

  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `${settings.tls ? 'https' : 'http'}://${urlHost(settings.host)}:${port}`,
    port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
