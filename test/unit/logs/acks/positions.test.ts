import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/base/logger.js';
import { AckTracker } from '../../../../src/logs/acks/ack-tracker.js';
import { PositionStore } from '../../../../src/logs/acks/positions.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'log-positions-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines };
}

describe('positions store', () => {
  it('saves and restores positions per server and log type', async () => {
    const path = join(dir, 'state', 'positions.json');
    const { logger } = capture();
    const a = await PositionStore.open(path, logger);
    a.set('edge-1', 'wowzastreamingengine_access', { fileId: '2024-01-15 00:00:00', offset: 4096, fields: 'date time tz x-event' });
    a.set('edge-2', 'wowzastreamingengine_access', { fileId: '', offset: 10 });
    a.set('edge-1', 'wowzastreamingengine_error', { fileId: '2024-01-15 00:00:00', offset: 2 ** 40 });
    await a.save();

    const b = await PositionStore.open(path, logger);
    expect(b.get('edge-1', 'wowzastreamingengine_access')).toEqual({ fileId: '2024-01-15 00:00:00', offset: 4096, fields: 'date time tz x-event' });
    expect(b.get('edge-2', 'wowzastreamingengine_access')).toEqual({ fileId: '', offset: 10 });
    expect(b.get('edge-1', 'wowzastreamingengine_error')?.offset).toBe(2 ** 40);
    expect(b.get('edge-3', 'wowzastreamingengine_access')).toBeUndefined();
    const doc = JSON.parse(readFileSync(path, 'utf8')) as { version: number; positions: unknown[] };
    expect(doc.version).toBe(1);
    expect(doc.positions).toContainEqual({ server: 'edge-2', log_type: 'wowzastreamingengine_access', file_id: '', offset: 10 });
  });

  it('replaces the file atomically: a reader never sees half a document, no temp file stays, the previous copy is kept', async () => {
    const path = join(dir, 'positions.json');
    const store = await PositionStore.open(path, capture().logger);
    store.set('s', 't', { fileId: 'x', offset: 0, fields: 'f '.repeat(20_000) });
    await store.save();
    let reads = 0;
    let stop = false;
    const reader = (async () => {
      while (!stop) {
        const text = readFileSync(path, 'utf8');
        expect(() => JSON.parse(text)).not.toThrow();
        reads++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let i = 1; i <= 40; i++) {
      store.set('s', 't', { fileId: 'x', offset: i, fields: 'f '.repeat(20_000 + i) });
      await store.save();
    }
    stop = true;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect(readdirSync(dir).sort()).toEqual(['positions.json', 'positions.json.prev']);
    expect((await PositionStore.open(path, capture().logger)).get('s', 't')?.offset).toBe(40);
    expect((JSON.parse(readFileSync(`${path}.prev`, 'utf8')) as { positions: Array<{ offset: number }> }).positions[0]?.offset).toBe(39);
  });

  it('writes the file 0640 whether the umask takes bits away or not', async () => {
    const path = join(dir, 'positions.json');
    for (const umask of [0o077, 0o022, 0o000]) {
      const before = process.umask(umask);
      try {
        const store = await PositionStore.open(path, capture().logger);
        store.set('s', 't', { fileId: 'x', offset: umask });
        await store.save();
      } finally {
        process.umask(before);
      }
      expect({ umask, mode: lstatSync(path).mode & 0o777, previous: lstatSync(`${path}.prev`).mode & 0o777 }).toEqual({ umask, mode: 0o640, previous: 0o640 });
      expect(readdirSync(dir).sort()).toEqual(['positions.json', 'positions.json.prev']);
    }
  });

  it('writes only when something changed', async () => {
    const path = join(dir, 'positions.json');
    const store = await PositionStore.open(path, capture().logger);
    await store.save();
    expect(existsSync(path)).toBe(false);
    store.set('s', 't', { fileId: '', offset: 1 });
    await Promise.all([store.save(), store.save(), store.save()]);
    expect(JSON.parse(readFileSync(path, 'utf8')).positions).toHaveLength(1);
  });

  it('starts fresh with a clear warning when the file is corrupt, keeping the bad file aside', async () => {
    const path = join(dir, 'positions.json');
    writeFileSync(path, '{"version":1,"positions":[{"server":"s","log_ty');
    const { logger, lines } = capture();
    const store = await PositionStore.open(path, logger);
    expect(store.entries()).toEqual([]);
    const warning = lines.find((l) => l.level === 'warn');
    expect(warning?.msg).toMatch(/positions file is corrupt: starting without saved positions/);
    expect(warning?.path).toBe(path);
    expect(readFileSync(`${path}.corrupt`, 'utf8')).toContain('log_ty');

    writeFileSync(path, '[1,2,3]');
    expect((await PositionStore.open(path, logger)).entries()).toEqual([]);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(2);
  });

  it('falls back to the previous copy when the file was truncated, says so once and reports it', async () => {
    const path = join(dir, 'positions.json');
    const store = await PositionStore.open(path, capture().logger);
    for (const offset of [100, 200, 300]) {
      store.set('s', 't', { fileId: 'a', offset });
      await store.save();
    }
    truncateSync(path, 25);
    const { logger, lines } = capture();
    const unusable: string[] = [];
    const reopened = await PositionStore.open(path, logger, { onUnusable: (f) => unusable.push(f) });
    expect(reopened.get('s', 't')).toEqual({ fileId: 'a', offset: 200 });
    expect(unusable).toEqual(['previous']);
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ path, previous: `${path}.prev`, kept: `${path}.corrupt` });
    expect(warnings[0]?.msg).toMatch(/resuming from its previous copy/);
    // Put back at once: a crash before the next save finds the same positions, and no second warning.
    const again = capture();
    expect((await PositionStore.open(path, again.logger)).get('s', 't')?.offset).toBe(200);
    expect(again.lines.filter((l) => l.level === 'warn')).toEqual([]);
    expect(readFileSync(`${path}.corrupt`, 'utf8')).toHaveLength(25);
  });

  it('a truncation behind its back does not become the previous copy', async () => {
    const path = join(dir, 'positions.json');
    const store = await PositionStore.open(path, capture().logger);
    store.set('s', 't', { fileId: 'a', offset: 100 });
    await store.save();
    store.set('s', 't', { fileId: 'a', offset: 200 });
    await store.save();
    truncateSync(path, 0);
    store.set('s', 't', { fileId: 'a', offset: 300 });
    await store.save();
    // Both files hold good documents: the new one, and (the truncated one not kept) a copy of it.
    expect((await PositionStore.open(`${path}.prev`, capture().logger)).get('s', 't')?.offset).toBe(300);
    truncateSync(path, 3);
    expect((await PositionStore.open(path, capture().logger)).get('s', 't')?.offset).toBe(300);
  });

  it('replaces links planted at the previous copy and the corrupt copy, never writes through them', async () => {
    const path = join(dir, 'positions.json');
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, `${path}.prev`);
    symlinkSync(victim, `${path}.corrupt`);
    const store = await PositionStore.open(path, capture().logger);
    store.set('s', 't', { fileId: 'a', offset: 1 });
    await store.save();
    store.set('s', 't', { fileId: 'a', offset: 2 });
    await store.save();
    truncateSync(path, 5);
    expect((await PositionStore.open(path, capture().logger)).get('s', 't')?.offset).toBe(1);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(`${path}.prev`).isFile()).toBe(true);
    expect(lstatSync(`${path}.corrupt`).isFile()).toBe(true);
  });

  it('keeps the valid entries of a file with some invalid ones', async () => {
    const path = join(dir, 'positions.json');
    writeFileSync(path, JSON.stringify({ version: 1, positions: [{ server: 's', log_type: 't', file_id: 'a', offset: 5 }, { server: 's', offset: -1 }, 'junk'] }));
    const { logger, lines } = capture();
    const store = await PositionStore.open(path, logger);
    expect(store.get('s', 't')).toEqual({ fileId: 'a', offset: 5 });
    expect(lines.find((l) => l.level === 'warn')).toMatchObject({ skipped: 2 });
  });

  it('treats a missing file as a first start', async () => {
    const { logger, lines } = capture();
    const store = await PositionStore.open(join(dir, 'nope.json'), logger);
    expect(store.entries()).toEqual([]);
    expect(lines.some((l) => l.level === 'warn' || l.level === 'error')).toBe(false);
  });

  it('rejects a save to an unusable path with the reason', async () => {
    writeFileSync(join(dir, 'file'), 'x');
    const store = await PositionStore.open(join(dir, 'file', 'positions.json'), capture().logger);
    store.set('s', 't', { fileId: '', offset: 1 });
    await expect(store.save()).rejects.toThrow(/EEXIST|ENOTDIR/);
  });
});

describe('acknowledgement order', () => {
  it('commits a position only when it and everything before it are acknowledged', () => {
    const committed: number[] = [];
    const acks = new AckTracker<number>((p) => committed.push(p));
    const first = acks.track(100, 2);
    const second = acks.track(200, 1);
    const third = acks.track(300, 0); // nothing to deliver, but it must wait its turn
    second.ack();
    expect(committed).toEqual([]);
    first.ack();
    expect(committed).toEqual([]);
    first.ack();
    expect(committed).toEqual([300]);
    third.ack(); // extra acks are harmless
    expect(acks.outstanding).toBe(0);
    // Empty chunks behind a stuck one do not pile up; the latest position wins once it completes.
    const stuck = acks.track(350, 1);
    for (let p = 351; p < 1351; p++) acks.track(p, 0);
    expect(acks.outstanding).toBe(1);
    stuck.ack();
    expect(committed).toEqual([300, 1350]);
    committed.length = 0;
    committed.push(300);
    acks.track(400, 0);
    expect(committed).toEqual([300, 400]);
  });
});
