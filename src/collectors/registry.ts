import type { CollectorName } from '../config/schema.js';
import { applicationCollector } from './application.js';
import type { Collector } from './collector.js';
import { connectionCountsCollector } from './connection-counts.js';
import { instanceCollector } from './instance.js';
import { machineCollector } from './machine.js';
import { recorderCollector } from './recorder.js';
import { statusCollector } from './status.js';
import { streamCollector } from './stream.js';
import { streamTargetCollector } from './stream-target.js';
import { vhostCollector } from './vhost.js';

/** The WSE collectors, in the order they are documented. `logs` and `video` run elsewhere. */
export const WSE_COLLECTORS: readonly Collector[] = [
  machineCollector,
  statusCollector,
  vhostCollector,
  applicationCollector,
  instanceCollector,
  streamCollector,
  recorderCollector,
  streamTargetCollector,
  connectionCountsCollector,
];

export function wseCollectorsEnabled(enabled: Record<CollectorName, { enabled: boolean }>): Collector[] {
  return WSE_COLLECTORS.filter((c) => enabled[c.name].enabled);
}
