import type { LogEntry } from '../transform/entry.js';

/** Somewhere parsed log lines go. Batching, retries and acknowledgements live in the SinkWorker. */
export interface LogSink {
  /** The `sink` label and the name in log lines. */
  readonly name: string;
  /** The sink sends each record's JSON as a JSON string (Loki): the encoder threads then write that form too. */
  readonly quotesRecords?: boolean;
  /**
   * Turns a batch into the bytes `send` transmits (compressed, when the sink compresses). Optional; when present the
   * worker encodes the next batch while the one before is on its way, and retries send the same bytes.
   */
  encode?(entries: readonly LogEntry[]): Buffer | Promise<Buffer>;
  /**
   * Delivers a batch (as `encoded`, when given). Resolves once the destination holds it (written, or
   * accepted by the receiver); rejects with a DeliveryError saying whether a retry can help. Other errors
   * count as retryable.
   */
  send(entries: readonly LogEntry[], signal: AbortSignal, encoded?: Buffer): Promise<void>;
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
