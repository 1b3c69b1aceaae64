import { z } from 'zod';

/**
 * The WSE 4.9.6+ webhook configuration API (reference wse-rest-api.md, section 2 "Webhooks" for the shapes and
 * section 4 "Webhooks (base {S}/webhooks)" for the endpoints). A filter's target must exist first (else 400); a
 * duplicate id answers 409 (docs/wowza-api-notes.md, "More shapes real servers send").
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

/** The `webhooks` object: `debugLog`, `source`, `filters`, `targets` (a config without any may leave them out). */
export const WebhookConfig = z.looseObject({
  debugLog: z.boolean().nullish(),
  source: z.string().nullish(),
  filters: z.array(WebhookFilter).nullish().transform((v) => v ?? []),
  targets: z.array(WebhookTarget).nullish().transform((v) => v ?? []),
});
export type WebhookConfig = z.infer<typeof WebhookConfig>;

/**
 * `GET|PUT {S}/webhooks` answer a wrapper: `webhooks` (the object above), `serverName`, `saveFieldList`,
 * `version`. The wrapper key is required: without it the answer is not the documented one.
 */
export const WebhooksWrapper = z.looseObject({ webhooks: WebhookConfig });

/** `GET {S}/webhooks/targets`: `serverName`, `targets`. */
export const TargetList = z.looseObject({ targets: z.array(WebhookTarget).nullish().transform((v) => v ?? []) });
/** `GET {S}/webhooks/filters`: `serverName`, `filters`. */
export const FilterList = z.looseObject({ filters: z.array(WebhookFilter).nullish().transform((v) => v ?? []) });

export const ServerListener = z.looseObject({ baseClass: z.string(), order: z.number().nullish() });

/** `{S}`: the server config; only the listener list matters here, the rest is sent back untouched. */
export const ServerConfigBody = z.looseObject({
  serverListeners: z
    .looseObject({ serverListeners: z.array(ServerListener).nullish().transform((v) => v ?? []) })
    .nullish(),
});
export type ServerConfigBody = z.infer<typeof ServerConfigBody>;

/**
 * What a write answers. The reference: POST and PUT of a target or filter answer the item, DELETE answers
 * `success`, `message`, `data`; the server resource's PUT is not shown. Any JSON object is taken, but one that
 * says `success: false` is a failure even under a 2xx status (servers answer some refusals that way).
 */
export const WriteAnswer = z.looseObject({ success: z.boolean().nullish(), message: z.string().nullish() });
