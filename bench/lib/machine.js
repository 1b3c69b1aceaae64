import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';

/** What the numbers were measured on: printed with them and stored in results.json. */
export function describeMachine() {
  const cpuinfo = safe(() => readFileSync('/proc/cpuinfo', 'utf8'), '');
  const cpuModel = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown';
  return {
    nproc: availableParallelism(),
    memoryBytes: totalmem(),
    freeH: safe(() => execFileSync('free', ['-h'], { encoding: 'utf8' }).trim(), 'free not available'),
    cpuModel,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverage: loadavg(),
  };
}

function safe(fn, fallback) {
  try {
    return fn();
  } catch {
    return fallback;
  }
}
