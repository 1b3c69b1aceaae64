import type { LogEntry } from '../log-entry.js';

/** Somewhere parsed log lines go. Batching, retries and acknowledgements live in the SinkWorker. */
export interface LogSink {
  /** The `sink` label and the name in log lines. */
  readonly name: string;
  /**
   * Delivers a batch. Resolves once the destination holds it (written, or accepted by the receiver);
   * rejects with a DeliveryError saying whether a retry can help. Other errors count as retryable.
   */
  send(entries: readonly LogEntry[], signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** A failed delivery. `retryable` false means the destination refused the batch for good (dead letter). */
export class DeliveryError extends Error {
  override name = 'DeliveryError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly details: { status?: number; retryAfterMs?: number } = {},
  ) {
    super(message);
  }
}
