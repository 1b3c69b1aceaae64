import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

/** Scrapes `/metrics` like Prometheus does (one keep-alive connection); times the whole body. */
export function createScraper(baseUrl) {
  const agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
  return {
    async scrape({ gzip = false } = {}) {
      const started = performance.now();
      const res = await request(`${baseUrl}/metrics`, { dispatcher: agent, headers: gzip ? { 'accept-encoding': 'gzip' } : {} });
      const body = Buffer.from(await res.body.arrayBuffer());
      const ms = performance.now() - started;
      if (res.statusCode !== 200) throw new Error(`/metrics answered ${res.statusCode}`);
      return { ms, bytes: body.length, body };
    },
    close: () => agent.close(),
  };
}

/** Sample lines of an exposition body (not HELP/TYPE comments), optionally only of metrics named `prefix...`. */
export function countSeries(body, prefix = '') {
  let n = 0;
  let start = 0;
  const text = body.toString('utf8');
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end > start && text.charCodeAt(start) !== 35 /* # */ && text.startsWith(prefix, start)) n++;
    start = end + 1;
  }
  return n;
}
