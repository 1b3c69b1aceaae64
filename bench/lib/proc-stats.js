import { readFileSync, writeFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux builds in practice). */
const USER_HZ = 100;

function read(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const kbField = (text, field) => Number(new RegExp(`^${field}:\\s*(\\d+)\\s*kB`, 'm').exec(text ?? '')?.[1] ?? NaN) * 1024;

/**
 * Memory of another process from /proc (Linux), in bytes: resident set size now and at its peak (VmHWM,
 * since start or the last resetPeak), and the private part of it (what the process alone adds: RSS also
 * counts the Node.js binary's pages, which every node process on the machine shares).
 */
export function residentMemory(pid) {
  const status = read(`/proc/${pid}/status`);
  const rollup = read(`/proc/${pid}/smaps_rollup`);
  return {
    rss: kbField(status, 'VmRSS'),
    peakRss: kbField(status, 'VmHWM'),
    privateRss: kbField(rollup, 'Private_Clean') + kbField(rollup, 'Private_Dirty'),
  };
}

/** Resets the peak RSS (VmHWM) to the current RSS, so later peaks exclude start-up. */
export function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU time (user + system) another process has used so far, in ms. */
export function cpuTimeMs(pid) {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) return NaN;
  // Fields after the parenthesised command name (which may hold spaces): utime is the 14th field, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / USER_HZ) * 1000;
}

/**
 * Resident memory of another process by kind of mapping, in bytes, from /proc/<pid>/smaps: `[heap]` (malloc's main
 * arena), `anon` (V8's heap spaces, malloc's mmapped chunks and thread arenas, thread stacks), `file` (the binary and
 * libraries) and any other named mapping. Tells a JavaScript heap that grew from memory outside it.
 */
export function residentByMapping(pid) {
  const smaps = read(`/proc/${pid}/smaps`);
  const out = {};
  if (smaps === undefined) return out;
  let kind = 'anon';
  for (const line of smaps.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const name = header[1].trim();
      kind = name === '' ? 'anon' : name.startsWith('/') ? 'file' : name;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] = (out[kind] ?? 0) + Number(rss[1]) * 1024;
  }
  return out;
}
