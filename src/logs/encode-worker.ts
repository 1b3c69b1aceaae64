import { parentPort, workerData } from 'node:worker_threads';
import { LineEncoder, type EncodingSettings, type LineSegment } from './line-encoding.js';

/** A worker thread of the EncoderPool: encodes the segments it is sent, in the order they come. */

interface Request {
  id: number;
  segment: LineSegment;
}

const encoder = new LineEncoder(workerData as EncodingSettings);
parentPort!.on('message', ({ id, segment }: Request) => {
  try {
    const result = encoder.encodeSafely(segment);
    // The bytes move to the event loop's thread without a copy.
    parentPort!.postMessage({ id, result }, [result.bytes.buffer as ArrayBuffer]);
  } catch (err) {
    parentPort!.postMessage({ id, error: (err as Error).message ?? String(err) });
  }
});
