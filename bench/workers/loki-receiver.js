import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { emit, serveRpc } from '../lib/rpc-worker.js';

/**
 * A loopback stand-in for Loki's push API, in a process of its own so receiving costs the shipper no CPU.
 * Answers every push with 204 like Loki. With `findMarkers` it also parses each body and reports when a
 * line containing a bench marker arrived (epoch ms), for the end-to-end delay.
 */

const MARKER = /bench-marker-\d+/g;
let server;
const totals = { requests: 0, bytes: 0 };

serveRpc({
  async start({ findMarkers = false }) {
    server = createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => {
        totals.bytes += c.length;
        if (findMarkers) chunks.push(c);
      });
      req.on('end', () => {
        totals.requests++;
        if (findMarkers) {
          const arrivedAt = Date.now();
          const body = Buffer.concat(chunks);
          const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8');
          for (const marker of text.match(MARKER) ?? []) emit('marker', { marker, arrivedAt });
        }
        res.writeHead(204).end();
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${server.address().port}` };
  },

  stats() {
    return { ...totals };
  },

  async close() {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  },
});
