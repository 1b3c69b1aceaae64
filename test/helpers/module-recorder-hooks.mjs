// Loader hooks of module-recorder.mjs (they run on Node's loader thread).
import { appendFileSync } from 'node:fs';

let file;
export function initialize(data) {
  file = data.file;
}
export async function load(url, context, next) {
  appendFileSync(file, `${url}\n`);
  return next(url, context);
}
