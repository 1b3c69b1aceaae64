import { parentPort } from 'node:worker_threads';
import { LIST_ANSWERS, type ListAnswerName } from './schemas.js';
import { sliceValue, transferables } from './answer-slices.js';
import { validateAnswer } from './answer-validation.js';
import type { ParseRequest, ParseResponse } from './answer-parser.js';

/** The thread of the AnswerParser: parses and validates the big answers it is sent, in the order they come. */

parentPort!.on('message', (request: ParseRequest) => {
  let response: ParseResponse;
  let transfer: ArrayBuffer[] = [];
  try {
    const outcome = validateAnswer(request.body, LIST_ANSWERS[request.schema as ListAnswerName], request.maxItems);
    if (outcome.ok) {
      const sliced = sliceValue(outcome.data);
      transfer = transferables(sliced);
      response = { id: request.id, ok: true, dropped: outcome.dropped, sliced };
    } else response = { id: request.id, ok: false, outcome };
  } catch (err) {
    response = { id: request.id, ok: false, error: (err as Error).message ?? String(err) };
  }
  parentPort!.postMessage(response, transfer);
});
