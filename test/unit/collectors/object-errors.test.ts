import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ObjectErrorLog } from '../../../src/collectors/object-errors.js';
import { createLogger } from '../../../src/base/logger.js';
import { WowzaHttpError, WowzaNetworkError } from '../../../src/wowza/errors.js';
import { BudgetWaitError } from '../../../src/polling/request-pacer.js';

/** A logger whose lines land in an array, as `serve` writes them. */
function capture(): { lines: Array<Record<string, unknown>>; log: ReturnType<typeof createLogger> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, log: createLogger({ destination }) };
}

const flush = () => new Promise((r) => setImmediate(r));
const SITE = { server: 'edge', endpoint: '/v2/x', url: 'http://edge:8087/v2/x' };
const refused = () => new WowzaNetworkError(SITE, 'ECONNREFUSED', 'connection refused');
const failing500 = () => new WowzaHttpError(SITE, 500, 'boom');
const streams = (n: number) => Array.from({ length: n }, (_, i) => `_defaultVHost_/live/_definst_/stream${i + 1}`);

/** One poll: `failing` objects fail with `err`, the rest answer; then its lines are said. */
function poll(errors: ObjectErrorLog, log: ReturnType<typeof createLogger>, objects: string[], failing: Set<string>, err: () => Error, serverDown: boolean): void {
  const outcomes = errors.forPoll(log);
  for (const o of objects) {
    if (failing.has(o)) outcomes.failed(o, err());
    else outcomes.ok(o);
  }
  outcomes.finish(objects.length);
  outcomes.say(serverDown);
}

describe('ObjectErrorLog: one line per poll and reason, whatever the number of objects (issue 45)', () => {
  it('1,000 streams failing while their server answers: one warning with the count and examples, one line when they answer again', async () => {
    const { lines, log } = capture();
    const counted: string[] = [];
    const errors = new ObjectErrorLog((reason) => counted.push(reason));
    const all = streams(1000);
    poll(errors, log, all, new Set(all), failing500, false);
    // The same failure next poll: said already.
    poll(errors, log, all, new Set(all), failing500, false);
    poll(errors, log, all, new Set(), refused, false);
    await flush();
    expect(counted).toHaveLength(2000);
    expect(lines.map((l) => l.msg)).toEqual(['1000 objects failed: left out of this poll, the other objects stay', '1000 objects answer again']);
    expect(lines[0]).toMatchObject({ level: 'warn', objects: 1000, reason: 'http' });
    expect(lines[0]!.examples).toEqual(all.slice(0, 5));
    expect(lines[1]).toMatchObject({ level: 'info', objects: 1000 });
  });

  it('one object: the line names it', async () => {
    const { lines, log } = capture();
    const errors = new ObjectErrorLog(() => undefined);
    const all = streams(3);
    poll(errors, log, all, new Set([all[1]!]), failing500, false);
    poll(errors, log, all, new Set(), refused, false);
    await flush();
    expect(lines.map((l) => [l.msg, l.object])).toEqual([
      ['object failed: left out of this poll, the other objects stay', all[1]],
      ['object answers again', all[1]],
    ]);
  });

  it('while the server is down its own line says it: objects that cannot reach it are not said, nor when they answer again', async () => {
    const { lines, log } = capture();
    const counted: string[] = [];
    const errors = new ObjectErrorLog((reason) => counted.push(reason));
    const all = streams(300);
    poll(errors, log, all, new Set(all.slice(150)), refused, true);
    poll(errors, log, all, new Set(all), refused, true);
    poll(errors, log, all, new Set(), refused, false);
    await flush();
    expect(lines).toEqual([]);
    // Still counted, each one.
    expect(counted).toHaveLength(450);
  });

  it('objects said to fail before their server went down are forgotten with it: no line per object on the way back', async () => {
    const { lines, log } = capture();
    const errors = new ObjectErrorLog(() => undefined);
    const all = streams(300);
    // The poll in flight when the server went down: it still counted as up, so its lost objects are said (one line).
    poll(errors, log, all, new Set(all.slice(100)), refused, false);
    poll(errors, log, all, new Set(all), refused, true);
    poll(errors, log, all, new Set(), refused, false);
    await flush();
    expect(lines.map((l) => l.msg)).toEqual(['200 objects failed: left out of this poll, the other objects stay']);
  });

  it('an object failing for a reason of its own is said even while its server is down', async () => {
    const { lines, log } = capture();
    const errors = new ObjectErrorLog(() => undefined);
    const all = streams(2);
    poll(errors, log, all, new Set([all[0]!]), failing500, true);
    await flush();
    expect(lines.map((l) => [l.msg, l.reason])).toEqual([['object failed: left out of this poll, the other objects stay', 'http']]);
  });

  it("objects the exporter's own limits held back past the poll's deadline: counted, one info line per run of such polls, never a warning", async () => {
    const { lines, log } = capture();
    const counted: string[] = [];
    const errors = new ObjectErrorLog((reason) => counted.push(reason));
    const all = streams(10);
    const heldBack = () => new BudgetWaitError('1200 ms', new Error('the poll deadline passed'));
    // stream1 fails on its own first; then, after an outage's recovery, the burst of polls holds 7 back, twice.
    poll(errors, log, all, new Set([all[0]!]), failing500, false);
    const burst = new Set(all.slice(0, 7));
    poll(errors, log, all, burst, heldBack, false);
    poll(errors, log, all, burst, heldBack, false);
    // Every object answers: stream1, which failed on its own, answers again; the held-back ones never failed.
    poll(errors, log, all, new Set(), heldBack, false);
    // Held back again later: a new run, said again.
    poll(errors, log, all, new Set([all[9]!]), heldBack, false);
    await flush();
    expect(counted).toEqual(['http', ...Array(14).fill('budget_wait'), 'budget_wait']);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'object failed: left out of this poll, the other objects stay'],
      ['info', "7 objects not read in this poll: the exporter's own limits held the request back past the poll's deadline (counted in wowza_exporter_object_errors_total; said again after a poll that held none back)"],
      ['info', 'object answers again'],
      ['info', "1 object not read in this poll: the exporter's own limits held the request back past the poll's deadline (counted in wowza_exporter_object_errors_total; said again after a poll that held none back)"],
    ]);
    expect(lines[1]).toMatchObject({ objects: 7, reason: 'budget_wait', examples: all.slice(0, 5) });
    expect(lines[2]).toMatchObject({ object: all[0] });
  });
});
