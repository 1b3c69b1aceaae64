import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 38: the real connectioncounts documents of the corpus (test/fixtures/real-world/connectioncounts,
 * PROVENANCE.md: `<WowzaMediaServer>` root, tree form, CRLF, URL-encoded names) served as-is to the real exporter
 * through the CLI, and every viewer count it exports checked against the document.
 *
 * The provider is read only for streams the REST instance lists name, and there is no captured REST answer of the
 * same server: the instance lists are built from the document's live streams (not evidence). The VOD file being
 * played in the second document is, as on a real server, in no instance list: it is left out and counted.
 */
const DIR = join(import.meta.dirname, '../fixtures/real-world/connectioncounts');
const S = '/v2/servers/_defaultServer_';
const V = `${S}/vhosts/_defaultVHost_`;

interface DocStream {
  app: string;
  written: string;
  name: string;
  sessions: Record<string, number>;
}

/** The document's streams, read here independently of the product: names decoded as Java's URLEncoder wrote them. */
function streamsOf(xml: string): DocStream[] {
  const out: DocStream[] = [];
  for (const app of xml.split('<Application>').slice(1)) {
    const appName = /<Name>([^<]*)<\/Name>/.exec(app)![1]!;
    for (const stream of app.split('<Stream>').slice(1)) {
      const written = /<Name>([^<]*)<\/Name>/.exec(stream)![1]!;
      const sessions = Object.fromEntries([...stream.matchAll(/<Sessions(\w+)>(\d+)<\/Sessions\1>/g)].map((m) => [m[1]!, Number(m[2])]));
      out.push({ app: appName, written, name: decodeURIComponent(written.replace(/\+/g, ' ')), sessions });
    }
  }
  return out;
}

const PROTOCOL: Record<string, string> = { Flash: 'rtmp', Cupertino: 'hls', SanJose: 'hds', Smooth: 'smooth', RTSP: 'rtsp', MPEGDash: 'mpeg_dash' };

for (const [file, vodApps] of [
  ['tree-wowzamediaserver-urlencoded-names.xml', []],
  ['tree-wowzamediaserver-vod.xml', ['vod']],
] as const) {
  describe(`real connectioncounts document ${file}`, () => {
    const xml = readFileSync(join(DIR, file), 'utf8');
    const doc = streamsOf(xml);
    const live = doc.filter((s) => !(vodApps as readonly string[]).includes(s.app));
    let server: Server;
    let exporter: RunningExporter;

    beforeAll(async () => {
      const apps = [...new Set(doc.map((s) => s.app))];
      const answers = new Map<string, string>([
        [`${S}/vhosts`, JSON.stringify({ vhosts: [{ id: '_defaultVHost_' }] })],
        [`${V}/applications`, JSON.stringify({ applications: apps.map((id) => ({ id, appType: 'Live' })) })],
      ]);
      for (const app of apps) {
        const incomingStreams = live.filter((s) => s.app === app).map((s) => ({ name: s.name, applicationInstance: '_definst_', isConnected: true, sourceIp: 'wowz://192.0.2.1:1935' }));
        answers.set(`${V}/applications/${app}/instances`, JSON.stringify({ instanceList: [{ name: '_definst_', incomingStreams, outgoingStreams: [], recorders: [], streamGroups: [] }] }));
      }
      server = createServer((req, res) => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        if (path === '/connectioncounts') {
          res.writeHead(200, { 'content-type': 'text/xml' }).end(xml);
          return;
        }
        const body = answers.get(path);
        res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(body ?? '{"success":false,"message":"not captured","code":"404"}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      exporter = await startExporterProcess(['--wowza.url', url, '--wowza.connectioncounts-url', `${url}/connectioncounts`, '--poll.interval', '1s']);
    });
    afterAll(async () => {
      await exporter?.stop();
      server?.closeAllConnections();
      await new Promise((r) => server?.close(r));
    });

    it('every live stream has the viewers the document gives, per protocol and in total, under its decoded name', async () => {
      const text = await waitFor('the connectioncounts collector', async () => {
        const t = await exporter.metrics();
        return samples(t, 'wowza_exporter_collector_success', { collector: 'connectioncounts' })[0]?.value === 1 ? t : undefined;
      }, 30_000);
      // A document of a VOD server alone has no live stream: then nothing but the count below.
      expect(live.length > 0 || vodApps.length > 0).toBe(true);
      for (const s of live) {
        const at = { application: s.app, stream: s.name };
        expect(samples(text, 'wowza_stream_connections_current', at).map((m) => m.value), s.written).toEqual([s.sessions.Total]);
        const byProtocol = Object.fromEntries(samples(text, 'wowza_stream_connections', at).map((m) => [m.labels.protocol, m.value]));
        const expected = Object.fromEntries(Object.entries(s.sessions).filter(([k]) => k !== 'Total').map(([k, v]) => [PROTOCOL[k]!, v]));
        expect(byProtocol, s.written).toEqual(expected);
      }
      // A VOD file being played is in the document and in no instance list: left out, and counted.
      expect(samples(text, 'wowza_exporter_connectioncounts_unmatched_streams')[0]?.value).toBe(doc.length - live.length);
      for (const s of doc.filter((d) => !live.includes(d))) expect(samples(text, 'wowza_stream_connections_current', { stream: s.name })).toEqual([]);
    });
  });
}
