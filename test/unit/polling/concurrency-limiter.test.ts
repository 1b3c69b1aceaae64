import { describe, expect, it } from 'vitest';
import { ConcurrencyLimiter } from '../../../src/polling/concurrency-limiter.js';

/**
 * A server in virtual time: `capacity` workers (0 = as many as asked), each request taking `serviceMs`, the
 * rest waiting in arrival order. Requests resolve as the clock reaches their end, so the limiter's control
 * law is exercised without real timers.
 */
class VirtualServer {
  now = 0;
  busy = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly waits: number[] = [];
  private readonly queue: Array<{ arrived: number; start: () => void }> = [];
  private readonly events: Array<{ at: number; fire: () => void }> = [];

  constructor(
    private readonly capacity: number,
    private serviceMs: number | ((n: number) => number),
    private readonly failWith?: (n: number) => string | undefined,
  ) {}

  private served = 0;

  setServiceMs(ms: number | ((n: number) => number)): void {
    this.serviceMs = ms;
  }

  /** One request through `limiter`; reports its latency and outcome back to it. */
  request(limiter: ConcurrencyLimiter, endpoint = '/stream'): Promise<void> {
    return limiter.run(
      () =>
        new Promise<void>((resolve) => {
          const sent = this.now;
          this.inFlight++;
          this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
          const start = () => {
            this.waits.push(this.now - sent);
            const n = ++this.served;
            this.at(this.now + (typeof this.serviceMs === 'number' ? this.serviceMs : this.serviceMs(n)), () => {
              this.inFlight--;
              const next = this.queue.shift();
              if (next) next.start();
              else this.busy--;
              limiter.observe(endpoint, this.failWith?.(n) ?? '200', (this.now - sent) / 1000);
              resolve();
            });
          };
          if (this.capacity === 0 || this.busy < this.capacity) {
            this.busy++;
            start();
          } else {
            this.queue.push({ arrived: sent, start });
          }
        }),
    );
  }

  private at(time: number, fire: () => void): void {
    this.events.push({ at: time, fire });
    this.events.sort((a, b) => a.at - b.at);
  }

  /** Runs until every request settled. */
  async settle(all: Promise<unknown>[]): Promise<void> {
    let done = false;
    void Promise.all(all).then(() => (done = true));
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (done) return;
      const e = this.events.shift();
      if (!e) throw new Error('stuck: requests pending but nothing scheduled');
      this.now = e.at;
      e.fire();
    }
  }

  p95Wait(): number {
    const s = [...this.waits].sort((a, b) => a - b);
    return s[Math.ceil(0.95 * s.length) - 1] ?? 0;
  }
}

function adaptive(server: VirtualServer, max = 64): ConcurrencyLimiter {
  return new ConcurrencyLimiter({ max, now: () => server.now });
}

async function cycle(server: VirtualServer, limiter: ConcurrencyLimiter, requests: number): Promise<number> {
  const started = server.now;
  await server.settle(Array.from({ length: requests }, () => server.request(limiter)));
  return server.now - started;
}

describe('concurrency limiter', () => {
  it('a fixed limit is a plain semaphore', async () => {
    const server = new VirtualServer(0, 20);
    const limiter = new ConcurrencyLimiter({ fixed: 8, now: () => server.now });
    await cycle(server, limiter, 100);
    expect(server.maxInFlight).toBe(8);
    expect(limiter.limit).toBe(8);
  });

  it('against a server serving 2 at once: settles between 2 and 4 in flight, cycles near the ideal, waits under 1.5 service times', async () => {
    const server = new VirtualServer(2, 20);
    const limiter = adaptive(server);
    await cycle(server, limiter, 50); // learning
    server.waits.length = 0;
    const ms = await cycle(server, limiter, 200);
    const ideal = (200 * 20) / 2;
    expect(ms).toBeLessThanOrEqual(ideal * 1.3);
    expect(server.p95Wait()).toBeLessThanOrEqual(30);
    expect(limiter.limit).toBeGreaterThanOrEqual(2);
    expect(limiter.limit).toBeLessThanOrEqual(4);
  });

  it('against a server with room to spare: climbs to the maximum and matches a fixed 32', async () => {
    const server = new VirtualServer(0, 20);
    const limiter = adaptive(server);
    const auto = await cycle(server, limiter, 1000);
    expect(limiter.limit).toBe(64);
    const fixed = new VirtualServer(0, 20);
    const thirtyTwo = await cycle(fixed, new ConcurrencyLimiter({ fixed: 32, now: () => fixed.now }), 1000);
    expect(auto).toBeLessThanOrEqual(thirtyTwo);
  });

  it('backs off when the server slows down, and halves on 503, 429 and timeouts', async () => {
    const server = new VirtualServer(0, 20);
    const limiter = adaptive(server);
    await cycle(server, limiter, 500);
    expect(limiter.limit).toBe(64);
    // A poll later each request costs four times as much: the server is loaded by something else.
    server.now += 15_000;
    server.setServiceMs(80);
    await cycle(server, limiter, 64);
    expect(limiter.limit).toBeLessThan(64);

    for (const code of ['503', '429', 'timeout', 'network']) {
      const failing = new VirtualServer(0, 20, (n) => (n > 300 ? code : undefined));
      const l = adaptive(failing);
      await cycle(failing, l, 300);
      expect(l.limit, code).toBe(64);
      await cycle(failing, l, 64);
      // One cut per round trip, not one per failed request.
      expect(l.limit, code).toBe(32);
    }
  });

  it('a passing fault costs little: once rounds come back without queueing, it doubles back up', async () => {
    const failing = new VirtualServer(0, 20, (n) => (n > 300 && n <= 364 ? '500' : undefined));
    const limiter = adaptive(failing);
    await cycle(failing, limiter, 364);
    const afterFault = limiter.limit;
    expect(afterFault).toBeLessThanOrEqual(32);
    // Two clean rounds, then doubling: back at 64 within a few rounds rather than an eighth a round.
    const answers = 2 * afterFault + 2 * afterFault + 4 * afterFault;
    await cycle(failing, limiter, answers);
    expect(limiter.limit).toBe(64);
  });

  it('does not grow while little is asked of it, and never leaves its bounds', async () => {
    const server = new VirtualServer(0, 20);
    const limiter = new ConcurrencyLimiter({ min: 2, max: 10, initial: 4, now: () => server.now });
    for (let i = 0; i < 50; i++) await cycle(server, limiter, 1);
    expect(limiter.limit).toBe(4);
    await cycle(server, limiter, 500);
    expect(limiter.limit).toBe(10);
    const dead = new VirtualServer(0, 20, () => '503');
    const l = new ConcurrencyLimiter({ min: 2, max: 10, initial: 8, now: () => dead.now });
    for (let i = 0; i < 10; i++) await cycle(dead, l, 10);
    expect(l.limit).toBe(2);
  });

  it('an odd slow answer (a long instance list) is not a queue; a server that stays slower is re-learnt', async () => {
    const server = new VirtualServer(0, (n) => (n % 30 === 0 ? 100 : 20));
    const limiter = adaptive(server);
    await cycle(server, limiter, 1000);
    expect(limiter.limit).toBe(64);
    // From now on every answer takes 80 ms, for reasons of its own: first read as a queue...
    server.setServiceMs(80);
    server.now += 15_000;
    await cycle(server, limiter, 200);
    expect(limiter.limit).toBeLessThan(64);
    // ...then, once the fast answers have left the baseline's two windows, as the server's new normal.
    for (let poll = 0; poll < 6; poll++) {
      server.now += 15_000;
      await cycle(server, limiter, 500);
    }
    expect(limiter.limit).toBe(64);
  });
});

describe('ceiling (Digest pacing)', () => {
  it('caps an adaptive limit, never grows past it meanwhile, and lifting it resumes from the cap', async () => {
    const server = new VirtualServer(0, 20);
    const limiter = adaptive(server);
    limiter.setCeiling(3);
    await cycle(server, limiter, 300);
    expect(server.maxInFlight).toBe(3);
    expect(limiter.limit).toBe(3);
    limiter.setCeiling(Infinity);
    expect(limiter.limit).toBe(3);
    await cycle(server, limiter, 1000);
    expect(limiter.limit).toBe(64);
  });

  it('leaves a fixed limit alone: the user chose it', async () => {
    const server = new VirtualServer(0, 20);
    const limiter = new ConcurrencyLimiter({ fixed: 8, now: () => server.now });
    limiter.setCeiling(2);
    await cycle(server, limiter, 100);
    expect(server.maxInFlight).toBe(8);
  });

  it('knows the fastest answer it saw', async () => {
    const server = new VirtualServer(0, 20);
    const limiter = adaptive(server);
    expect(limiter.fastestMs).toBeUndefined();
    await cycle(server, limiter, 20);
    expect(limiter.fastestMs).toBeCloseTo(20, 0);
  });
});
