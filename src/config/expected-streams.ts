import { z } from 'zod';
import type { ExpectedStream } from '../wowza/expected-stream.js';


const DEFAULT_INSTANCE = '_definst_';

/** Streams a configuration may name per server: a list to watch, not a discovery; the series stay bounded. */
export const MAX_EXPECTED_STREAMS = 1000;

/**
 * `expected_streams:` of a server or a target-file entry. Names are the ones Wowza shows (case kept); a part may not be
 * empty. `live/cam2` means instance `_definst_`.
 */
export const ExpectedStreamsSchema = z
  .array(
    z.string().transform((v, ctx): ExpectedStream => {
      const parts = v.split('/');
      if ((parts.length !== 2 && parts.length !== 3) || parts.some((p) => p.trim() === '')) {
        ctx.addIssue({ code: 'custom', message: `"${v}" is not application/stream or application/instance/stream` });
        return z.NEVER;
      }
      const [application, ...rest] = parts as [string, ...string[]];
      return rest.length === 1 ? { application, appInstance: DEFAULT_INSTANCE, stream: rest[0]! } : { application, appInstance: rest[0]!, stream: rest[1]! };
    }),
  )
  .max(MAX_EXPECTED_STREAMS, `list at most ${MAX_EXPECTED_STREAMS} expected streams per server`)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((e, i) => {
      const key = `${e.application}/${e.appInstance}/${e.stream}`;
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i], message: `${key} is listed twice` });
      seen.add(key);
    });
  });
