/**
 * The worker side of children.js: answers `{ id, method, params }` messages from the bench with
 * `{ id, result }` or `{ id, error }`, and can push `{ event, data }` on its own.
 */
export function serveRpc(handlers) {
  process.on('message', (m) => {
    if (!m || m.id === undefined) return;
    const handler = handlers[m.method];
    if (!handler) {
      process.send({ id: m.id, error: `unknown method ${m.method}` });
      return;
    }
    Promise.resolve()
      .then(() => handler(m.params ?? {}))
      .then(
        (result) => process.send({ id: m.id, result: result ?? null }),
        (err) => process.send({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
      );
  });
  // The bench went away (finished, crashed or was killed): never outlive it.
  process.on('disconnect', () => process.exit(0));
  process.send({ ready: true });
}

export function emit(event, data) {
  if (process.connected) process.send({ event, data });
}
