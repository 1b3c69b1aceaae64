#!/usr/bin/env node
/**
 * `npm run test:busy` (issue 26): the test suite while two CPU-bound processes keep both CPUs of a CI machine busy,
 * as other jobs do. A test that waits on a wall-clock limit instead of on what the exporter reports fails here first.
 *
 *   npm run test:busy                 build, then the suite once beside two busy processes
 *   npm run test:busy -- --runs 3     three times in a row, stopping at the first failure
 *
 * The busy processes are plain `node` loops (nothing to install), started before the suite and killed by pid when
 * it ends, fails or is interrupted; a watchdog kills everything after 60 minutes.
 */
import { spawn } from 'node:child_process';
import process from 'node:process';

const runsArg = process.argv.indexOf('--runs');
const runs = runsArg >= 0 ? Number(process.argv[runsArg + 1]) : 1;
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write('test:busy: --runs takes a whole number of 1 or more\n');
  process.exit(2);
}

const hogs = [];
const children = new Set();
const killAll = () => {
  for (const h of hogs) if (h.exitCode === null) h.kill('SIGKILL');
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}
process.on('exit', killAll);
setTimeout(() => {
  process.stderr.write('test:busy: 60 minutes passed, stopping everything\n');
  killAll();
  process.exit(1);
}, 60 * 60_000).unref();

for (let i = 0; i < 2; i++) {
  // Busy until killed: a tight loop that never yields.
  hogs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}
process.stdout.write(`test:busy: two busy processes (pids ${hogs.map((h) => h.pid).join(', ')}) beside the suite\n`);

let failed = false;
for (let run = 1; run <= runs && !failed; run++) {
  const started = Date.now();
  const code = await new Promise((resolve) => {
    const suite = spawn('npx', ['vitest', 'run'], { stdio: 'inherit', env: process.env });
    children.add(suite);
    suite.on('exit', (c, s) => {
      children.delete(suite);
      resolve(c ?? (s ? 1 : 0));
    });
  });
  const took = Math.round((Date.now() - started) / 1000);
  process.stdout.write(`test:busy: run ${run} of ${runs} ${code === 0 ? 'passed' : 'FAILED'} in ${took} s\n`);
  failed = code !== 0;
}
killAll();
process.exit(failed ? 1 : 0);
