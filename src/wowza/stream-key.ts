/** Key of a stream in the map `parseConnectionCounts` returns, and in the collector that reads it. */
export function streamKey(vhost: string, application: string, instance: string, stream: string): string {
  return `${vhost}\u0000${application}\u0000${instance}\u0000${stream}`;
}
