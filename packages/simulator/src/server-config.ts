import { SERVER_NAME } from './topology.js';

/**
 * The server's own configuration (`{S}`, from `conf/Server.xml`): a few of its fields and the server
 * listener list, which is what turns webhook delivery on. A real server loads listeners at start-up; the
 * simulator applies the list at once, so tests need no restart.
 */

/** The server listener that delivers webhooks (reference: "Webhook setup rule"). */
export const LISTENER_CLASS = 'com.wowza.wms.webhooks.WebhookListener';

export interface ServerListener {
  baseClass: string;
  order: number;
}

export type ServerConfigUpdate = { ok: true } | { ok: false; message: string };

/** Listeners a stock Server.xml carries. */
const STOCK_LISTENERS: readonly ServerListener[] = [{ baseClass: 'com.wowza.wms.mediacache.impl.MediaCacheServerListener', order: 0 }];

export class ServerConfig {
  private listeners: ServerListener[] = STOCK_LISTENERS.map((l) => ({ ...l }));
  private description = '';
  /** Changes on every save, as the real `version` does (epoch ms of the save). */
  private version = String(Date.now());
  private readonly startedAt = Date.now();

  hasListener(baseClass: string): boolean {
    return this.listeners.some((l) => l.baseClass === baseClass);
  }

  /** The `{S}` body: the Server resource of the reference's section 2, every field (thread pools are strings there). */
  body(): Record<string, unknown> {
    const own = { serverName: SERVER_NAME, version: this.version, saveFieldList: [] };
    return {
      ...own,
      name: 'Wowza Streaming Engine',
      description: this.description,
      ipAddress: '*',
      serverId1: '',
      serverId2: '',
      defaultStreamPrefix: 'mp4',
      handlerThreadPool: '${com.wowza.wms.TuningAuto}',
      handlerThreadPoolAutoValue: '160',
      transportThreadPool: '${com.wowza.wms.TuningAuto}',
      transportThreadPoolAutoValue: '120',
      port: 8086,
      rtpDataPortSharingPort: 0,
      serverTS: this.startedAt,
      rtpDataPortSharing: false,
      serverListeners: { ...own, serverListeners: this.listeners.map((l) => ({ ...own, ...l })) },
    };
  }

  /**
   * A PUT of `{S}`: `serverListeners.serverListeners` replaces the listener list, `description` is kept;
   * the other fields are read-only here and ignored. Nothing changes when any part is invalid.
   */
  update(body: unknown): ServerConfigUpdate {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return { ok: false, message: 'the server config must be a JSON object' };
    const b = body as Record<string, unknown>;
    if (b.serverName !== undefined && b.serverName !== null && b.serverName !== SERVER_NAME) {
      return { ok: false, message: `serverName "${String(b.serverName)}" does not match the server "${SERVER_NAME}"` };
    }
    if (b.description !== undefined && b.description !== null && typeof b.description !== 'string') return { ok: false, message: 'description must be a string' };
    let listeners: ServerListener[] | undefined;
    if (b.serverListeners !== undefined && b.serverListeners !== null) {
      const wrapper = b.serverListeners as Record<string, unknown>;
      if (typeof wrapper !== 'object' || Array.isArray(wrapper)) return { ok: false, message: 'serverListeners must be an object holding a serverListeners list' };
      const list = wrapper.serverListeners ?? [];
      if (!Array.isArray(list)) return { ok: false, message: 'serverListeners.serverListeners must be a list' };
      listeners = [];
      for (const [i, item] of list.entries()) {
        const where = `serverListeners.serverListeners[${i}]`;
        if (item === null || typeof item !== 'object' || Array.isArray(item)) return { ok: false, message: `${where} must be {baseClass, order}` };
        const l = item as Record<string, unknown>;
        if (typeof l.baseClass !== 'string' || l.baseClass.trim() === '') return { ok: false, message: `missing required field: ${where}.baseClass` };
        const order = l.order ?? i;
        if (typeof order !== 'number' || !Number.isInteger(order) || order < 0) return { ok: false, message: `${where}.order must be a whole number >= 0` };
        listeners.push({ baseClass: l.baseClass, order });
      }
    }
    if (typeof b.description === 'string') this.description = b.description;
    if (listeners) this.listeners = listeners;
    this.version = String(Date.now());
    return { ok: true };
  }
}
