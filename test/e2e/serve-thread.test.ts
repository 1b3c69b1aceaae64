import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { samples, startExporterProcess } from '../helpers/exporter-process.js';

/** `npx wowza-exporter` gets a small V8 young generation without any setting, and a user's own one wins. */
describe('the exporter\'s heap, as users run it', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', apps: 4, streams: 50 });
  });
  afterAll(() => sim.close());

  async function newSpaceBytes(env: NodeJS.ProcessEnv): Promise<number> {
    const exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password, ...env });
    try {
      // A few polls of a few hundred streams: enough for V8 to grow the young generation as far as allowed.
      await new Promise((r) => setTimeout(r, 3000));
      return samples(await exporter.metrics(), 'nodejs_heap_space_size_total_bytes', { space: 'new' })[0]!.value;
    } finally {
      await exporter.stop();
    }
  }

  it('without NODE_OPTIONS: the young generation of --max-semi-space-size=2 (not the 32 MiB of node\'s default)', async () => {
    expect(await newSpaceBytes({ NODE_OPTIONS: '' })).toBeLessThanOrEqual(4 * 1024 * 1024);
  });

  it('with NODE_OPTIONS=--max-semi-space-size=1: the user\'s setting', async () => {
    expect(await newSpaceBytes({ NODE_OPTIONS: '--max-semi-space-size=1' })).toBeLessThanOrEqual(2 * 1024 * 1024);
  });
});
