import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';

/** Issue 45: the status page linked a /probe URL that answered 400 when no module existed. Every link must answer. */
describe('the links of the landing and status pages', () => {
  let sim: Simulator;
  let exporter: RunningExporter;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic' });
    exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username], { WOWZA_PASSWORD: sim.password });
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
  });

  it('every link a page shows answers a GET with a success', async () => {
    const html = await (await fetch(`${exporter.url}/`)).text();
    const links = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!).filter((l) => l.startsWith('/'));
    expect(links.length).toBeGreaterThanOrEqual(4);
    const failing: string[] = [];
    for (const link of new Set(links)) {
      const res = await fetch(`${exporter.url}${link.replaceAll('&amp;', '&')}`);
      await res.arrayBuffer();
      if (res.status >= 400) failing.push(`${link}: ${res.status}`);
    }
    expect(failing).toEqual([]);
  });
});
