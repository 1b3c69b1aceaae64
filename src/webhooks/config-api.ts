import { z } from 'zod';

/**
 * The WSE 4.9.6+ webhook configuration API, as far as the public reference shows it. Paths under
 * `{S}/webhooks`; a filter's target must exist first (else 400); a duplicate id answers 409.
 */
export const WEBHOOK_EP = {
  config: '/v2/servers/{server}/webhooks',
  targets: '/v2/servers/{server}/webhooks/targets',
  target: '/v2/servers/{server}/webhooks/targets/{id}',
  filters: '/v2/servers/{server}/webhooks/filters',
  filter: '/v2/servers/{server}/webhooks/filters/{id}',
  server: '/v2/servers/{server}',
} as const;

export const LISTENER_CLASS = 'com.wowza.wms.webhooks.WebhookListener';

export const WebhookTarget = z.looseObject({
  id: z.string(),
  url: z.string().nullish(),
  headers: z.array(z.looseObject({ name: z.string(), value: z.string() })).nullish(),
  auth: z.looseObject({ type: z.string(), secret: z.string().nullish() }).nullish(),
});
export type WebhookTarget = z.infer<typeof WebhookTarget>;

export const WebhookFilter = z.looseObject({
  id: z.string(),
  enabled: z.boolean().nullish(),
  criteria: z.string().nullish(),
  targetRef: z.string().nullish(),
  maxRetryAttempts: z.number().nullish(),
  retryDelay: z.number().nullish(),
  retryDelayUnit: z.string().nullish(),
});
export type WebhookFilter = z.infer<typeof WebhookFilter>;

export const WebhookConfig = z.looseObject({
  source: z.string().nullish(),
  filters: z.array(WebhookFilter).nullish().transform((v) => v ?? []),
  targets: z.array(WebhookTarget).nullish().transform((v) => v ?? []),
});
export type WebhookConfig = z.infer<typeof WebhookConfig>;

export const ServerListener = z.looseObject({ baseClass: z.string(), order: z.number().nullish() });

/** `{S}`: the server config; only the listener list matters here, the rest is sent back untouched. */
export const ServerConfigBody = z.looseObject({
  serverListeners: z
    .looseObject({ serverListeners: z.array(ServerListener).nullish().transform((v) => v ?? []) })
    .nullish(),
});
export type ServerConfigBody = z.infer<typeof ServerConfigBody>;

/** `{"success":true,"message":"Saved","data":null}` and friends. */
export const SaveResult = z.looseObject({ success: z.boolean().nullish(), message: z.string().nullish() });
