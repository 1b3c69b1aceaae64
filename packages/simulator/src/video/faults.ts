import type { VideoSchedule } from './schedule-object.js';

/**
 * What tests make the simulated service do beyond the reference:
 *
 * - rate limiting: the next `count` requests answer 429 with `Retry-After` (rate limits are "not shown" in
 *   section 8 of the reference; the header is HTTP's own, RFC 9110 section 10.2.3), or without it;
 * - values the reference does not list: answers carry `value` in `field` (a new `state` or `action_type`, an
 *   unreadable time) for one schedule or all, in the list items that have the field and in every
 *   `{schedule}` answer (GET and PATCH). The stored schedule is unchanged. docs/wowza-api-notes.md: "Enum values the
 *   docs list are not a promise that no other value will appear."
 */

export type InjectableField = Exclude<keyof VideoSchedule, 'id'>;

export interface UnknownValueFault {
  field: InjectableField;
  value: string;
  /** The schedule whose answers carry it; every schedule when absent. */
  id?: string;
}

export interface RateLimitFault {
  count: number;
  /** Seconds for `Retry-After` (default 1); null sends no header. */
  retryAfterSeconds?: number | null;
}

export class VideoFaults {
  private limited = 0;
  private retryAfter: number | null = 1;
  private readonly unknown: UnknownValueFault[] = [];

  /** The next `count` requests (authorized ones) answer 429. */
  rateLimit(count: number, retryAfterSeconds: number | null = 1): void {
    this.limited = count;
    this.retryAfter = retryAfterSeconds;
  }

  unknownValue(fault: UnknownValueFault): void {
    this.unknown.push({ ...fault });
  }

  clear(): void {
    this.limited = 0;
    this.unknown.length = 0;
  }

  /** Whether this request is rate limited (counting it), and the `Retry-After` value to send. */
  takeRateLimit(): { retryAfter: string | undefined } | undefined {
    if (this.limited <= 0) return undefined;
    this.limited--;
    return { retryAfter: this.retryAfter === null ? undefined : String(this.retryAfter) };
  }

  /** The item as answered: injected values replace the fields the item has. */
  apply<T extends { id: string }>(item: T): T {
    let out = item;
    for (const f of this.unknown) {
      if ((f.id === undefined || f.id === item.id) && f.field in item) out = { ...out, [f.field]: f.value };
    }
    return out;
  }
}
