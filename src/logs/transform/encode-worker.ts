import { parentPort, workerData } from 'node:worker_threads';
import { segmentOf, type EncodeRequest } from './encoder-pool.js';
import { LineEncoder, type EncodingSettings } from './line-encoding.js';

/** A worker thread of the EncoderPool: encodes the segments it is sent, in the order they come. */

const encoder = new LineEncoder(workerData as EncodingSettings);
parentPort!.on('message', (request: EncodeRequest) => {
  const id = request.id;
  try {
    const result = encoder.encodeSafely(segmentOf(request));
    // The bytes and the arrays move to the event loop's thread without a copy.
    const transfer = [result.bytes, result.index, result.ends, result.severity, result.timeMs, ...(result.lokiPrefix ? [result.lokiPrefix] : [])].map((a) => a.buffer as ArrayBuffer);
    parentPort!.postMessage({ id, result }, transfer);
  } catch (err) {
    parentPort!.postMessage({ id, error: (err as Error).message ?? String(err) });
  }
});
