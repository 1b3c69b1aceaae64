import type { Registry } from 'prom-client';
import { listenAddresses, type RuntimeConfig } from '../config/load.js';
import { connectionCapMetrics, defaultMaxConnections, HEALTH_PATHS } from '../http/connection-cap.js';
import { startExporterServer, type RouteHandler } from '../http/server.js';
import { systemdSockets } from '../http/systemd-socket.js';
import type { Logger } from '../base/logger.js';

export type WebSettings = Awaited<ReturnType<typeof loadWebSettings>>;

/** The web config file (TLS, basic auth), read before anything starts; its code is loaded only when one is set. */
export async function loadWebSettings(runtime: RuntimeConfig, logger: Logger) {
  const file = runtime.config.web.config_file;
  if (!file) return undefined;
  const webConfig = await import('../http/web-config.js');
  const web = await webConfig.loadWebConfig(file, (msg, meta) => logger.warn(meta, msg));
  return { webConfig, web };
}

/** Starts answering HTTP on the configured addresses (or systemd's sockets), with the web config applied. */
export function listen(runtime: RuntimeConfig, o: { web: WebSettings; routes: Map<string, RouteHandler>; links: { path: string; text: string }[]; registry: Registry; logger: Logger }) {
  const { logger } = o;
  const maxConnections = runtime.config.web.max_connections ?? defaultMaxConnections();
  const tls = o.web ? { createWith: o.web.webConfig.createServerFactory(o.web.web, (msg, meta) => logger.warn(meta, msg)), guard: o.web.webConfig.basicAuthGuard(o.web.web), tls: o.web.web.tls !== undefined } : {};
  return startExporterServer({
    listen: runtime.config.web.systemd_socket ? systemdSockets().map((fd) => ({ fd })) : listenAddresses(runtime.config).map((address) => ({ address })),
    logger,
    routes: o.routes,
    ...tls,
    // Kubelet and load-balancer probes carry no credentials: with basic auth on, a guarded health check would restart
    // the pod in a loop. They say "OK" or "ready" and nothing else; TLS and client certificates still apply.
    open: HEALTH_PATHS,
    links: o.links,
    // DNS rebinding: with the lifecycle API on, a state-changing /-/ request must name the exporter in its Host.
    ...(runtime.config.web.enable_lifecycle ? { lifecycleHosts: runtime.config.web.allowed_hosts } : {}),
    maxConnections,
    onConnectionShed: connectionCapMetrics(o.registry, maxConnections),
  });
}
