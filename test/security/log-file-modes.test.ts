import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startExporterProcess, writeLogsConfig, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 41, finding 6: under umask 000 the directories the log pipeline made were 0777 (mkdir's mode is masked by
 * the umask, and none was given), and the positions file 0644. Whatever the umask, directories are now 0750 and
 * files 0640.
 */

const ACCESS = 'wowzastreamingengine_access';

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(4, '0');

describe('files and directories of the log pipeline under umask 000', () => {
  let dir = '';
  let sim: Simulator;
  let refusing: Server;
  let exporter: RunningExporter | undefined;
  const paths = {
    positions: '',
    sink: '',
    deadLetter: '',
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'log-file-modes-'));
    paths.positions = join(dir, 'state', 'positions', 'positions.json');
    paths.sink = join(dir, 'out', 'ndjson', 'wowza.ndjson');
    paths.deadLetter = join(dir, 'dead', 'letters', 'dead-letter.ndjson');
    // The exporter runs under umask 000, set before any of its code runs.
    const preload = join(dir, 'umask-000.cjs');
    // It also leaves a file made with Node's default mode (0666 before the umask): proof the umask was 000.
    writeFileSync(preload, `process.umask(0);\nrequire('node:fs').writeFileSync(${JSON.stringify(join(dir, 'umask-probe'))}, '');\n`);
    // A sink that refuses every batch for good: its lines go to the dead-letter file, which is then created.
    refusing = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(400, { 'content-type': 'text/plain' }).end('no\n'));
    });
    await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r));
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0 } });
    const config = writeLogsConfig(dir, sim, {
      positions_file: paths.positions,
      dead_letter_file: paths.deadLetter,
      positions_sync_interval: '100ms',
      follow_interval: '200ms',
      start_at: 'beginning',
      log_types: ['access'],
      sinks: [
        { type: 'file', path: paths.sink },
        { type: 'http', url: `http://127.0.0.1:${(refusing.address() as { port: number }).port}/ingest` },
      ],
      batch: { max_lines: 10, max_wait: '100ms' },
    });
    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: sim.password, NODE_OPTIONS: `--require ${preload}` });
    sim.logs.append(ACCESS, Array.from({ length: 30 }, (_, i) => ({ 'x-event': 'play', 'x-category': 'stream', 'x-severity': 'INFO', 'x-comment': `seq=${i + 1}` })));
    const end = sim.logs.bytes(ACCESS).length;
    await waitFor(
      'the lines written, dead-lettered, and their position saved',
      () => {
        if (!existsSync(paths.sink) || !existsSync(paths.deadLetter)) return undefined;
        if (!readFileSync(paths.sink, 'utf8').includes('seq=30')) return undefined;
        try {
          const doc = JSON.parse(readFileSync(paths.positions, 'utf8')) as { positions: Array<{ offset: number }> };
          return doc.positions[0]?.offset === end ? true : undefined;
        } catch {
          return undefined;
        }
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; output:\n${exporter?.output().slice(-3000)}`);
    });
  }, 120_000);

  afterAll(async () => {
    await exporter?.stop('SIGKILL');
    await sim?.close();
    await new Promise((r) => refusing?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the exporter really ran under umask 000', () => {
    expect(modeOf(join(dir, 'umask-probe'))).toBe('0666');
  });

  it('makes every directory it creates 0750', () => {
    for (const d of ['state', 'state/positions', 'out', 'out/ndjson', 'dead', 'dead/letters']) expect([d, modeOf(join(dir, d))]).toEqual([d, '0750']);
  });

  it('makes the positions file, its previous copy, the sink file and the dead-letter file 0640', () => {
    for (const f of [paths.positions, `${paths.positions}.prev`, paths.sink, paths.deadLetter]) expect([f, modeOf(f)]).toEqual([f, '0640']);
  });
});
