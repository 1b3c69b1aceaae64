import { z } from 'zod';

/**
 * A WSE webhook event as delivered (from public reports; unknown fields are kept):
 * `{"id","timestamp"(epoch ms),"name":"stream.started","source","version":"1.0","context":{...},"data":{}}`.
 */
export const WebhookEvent = z.looseObject({
  id: z.union([z.string().min(1).max(256), z.number()]).transform(String),
  timestamp: z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]),
  name: z.string().min(1).max(128).regex(/^[A-Za-z0-9_.-]+$/, 'event name must be dotted words like stream.started'),
  source: z.string().max(512).nullish(),
  version: z.string().max(32).nullish(),
  context: z
    .looseObject({
      vhost: z.string().max(256).nullish(),
      app: z.string().max(256).nullish(),
      appInstance: z.string().max(256).nullish(),
      stream: z.string().max(1024).nullish(),
      state: z.string().max(64).nullish(),
    })
    .default({}),
  data: z.unknown().optional(),
});
export type WebhookEvent = z.infer<typeof WebhookEvent>;
