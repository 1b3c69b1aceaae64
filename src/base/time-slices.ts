/**
 * Runs `steps` to its end, handing the event loop back (setImmediate) whenever `sliceMs` have passed since it last
 * did: long work in short turns, so that health checks and scrapes arriving meanwhile get theirs. The generator yields
 * where it may be paused.
 */
export async function runInSlices<T>(steps: Generator<void, T>, sliceMs = 4): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

/** Runs `steps` to its end at once, without pausing: the same work as runInSlices, for callers that cannot wait. */
export function runAtOnce<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
