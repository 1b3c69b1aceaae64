/** Endpoint templates: the `endpoint` label of the request counter and the names in error messages. */
export const EP = {
  machineCurrent: '/v2/machine/monitoring/current',
  serverStatus: '/v2/servers/{server}/status',
  vhosts: '/v2/servers/{server}/vhosts',
  vhostCurrent: '/v2/servers/{server}/vhosts/{vhost}/monitoring/current',
  applications: '/v2/servers/{server}/vhosts/{vhost}/applications',
  applicationCurrent: '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/monitoring/current',
  instances: '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances',
  streamCurrent:
    '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/incomingstreams/{stream}/monitoring/current',
  logTypes: '/v2/servers/{server}/logs',
  logCurrent: '/v2/servers/{server}/logs/{logType}',
  logFiles: '/v2/servers/{server}/logfiles',
  logFile: '/v2/servers/{server}/logfiles/{logName}',
} as const;

export type EndpointTemplate = (typeof EP)[keyof typeof EP];

/** Fills a template with URL-encoded values. */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const v = values[key];
    if (v === undefined) throw new Error(`missing path value ${key} for ${template}`);
    return encodeURIComponent(v);
  });
}
