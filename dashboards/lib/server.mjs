// The server detail dashboard (wowza-server.json).
import { JOB, SRV, datasourceVariable, labelVariable, jobVariable, prom, timeseries, stat, table, negativeY, dashed, row, dashboard } from './kit.mjs';

// ---------------------------------------------------------------------------------------------------
// Server detail

const V = `${SRV},vhost=~"$vhost"`;
const A = `${V},application=~"$application"`;

export const server = dashboard({
  uid: 'wowza-server',
  title: 'Wowza / Server detail',
  description: 'One Wowza Streaming Engine server: machine, status, virtual hosts, applications, connections per protocol and bandwidth.',
  variables: [
    datasourceVariable('datasource', 'Prometheus', 'prometheus'),
    jobVariable,
    labelVariable('server', 'Server', `label_values(wowza_up{${JOB}}, server)`, { multi: false, includeAll: false }),
    labelVariable('vhost', 'Virtual host', `label_values(wowza_vhost_uptime_seconds{${SRV}}, vhost)`),
    labelVariable('application', 'Application', `label_values(wowza_application_info{${V}}, application)`),
  ],
  rows: [
    row('Server', [
      stat({ title: 'Version', unit: 'none', textMode: 'name', w: 6, description: 'Wowza Streaming Engine version (wowza_server_info).', targets: [prom(`wowza_server_info{${SRV}}`, '{{version}}', { instant: true })] }),
      stat({ title: 'Uptime', unit: 'dtdurations', description: 'Time the Wowza server has been running (wowza_server_uptime_seconds).', targets: [prom(`wowza_server_uptime_seconds{${SRV}}`, '{{server}}')] }),
      stat({
        title: 'Licence expires in',
        unit: 'dtdurations',
        description: 'Time until the licence expires (wowza_server_license_expiry_timestamp_seconds); "No data" for licences without an expiry date.',
        thresholds: { mode: 'absolute', steps: [{ color: 'red', value: null }, { color: 'orange', value: 14 * 86400 }, { color: 'green', value: 30 * 86400 }] },
        targets: [prom(`wowza_server_license_expiry_timestamp_seconds{${SRV}} - time()`, '{{server}}')],
      }),
      stat({ title: 'Processor cores', unit: 'none', description: 'Processor cores of the server (wowza_server_processor_cores).', targets: [prom(`wowza_server_processor_cores{${SRV}}`, '{{server}}')] }),
      stat({ title: 'Maximum Java heap', unit: 'bytes', w: 3, description: 'Maximum Java heap of the Wowza process (wowza_server_java_heap_max_bytes, javaMaxHeapSize).', targets: [prom(`wowza_server_java_heap_max_bytes{${SRV}}`, '{{server}}')] }),
      stat({ title: 'Total memory', unit: 'bytes', w: 3, description: 'Memory of the server (wowza_server_memory_total_bytes).', targets: [prom(`wowza_server_memory_total_bytes{${SRV}}`, '{{server}}')] }),
      table({
        title: 'Features',
        unit: 'bool_yes_no',
        w: 6,
        h: 8,
        description: 'Features the server is licensed for (wowza_server_feature_licensed: transcoder, DVR, DRM), from the status endpoint. Use and availability are wowza_server_feature_in_use and wowza_server_feature_available.',
        targets: [prom(`wowza_server_feature_licensed{${SRV}}`, '', { instant: true })],
        hide: ['job', 'instance', 'server'],
        columns: { feature: 'Feature', Value: 'Licensed' },
      }),
      timeseries({
        title: 'Connections and limit',
        unit: 'short',
        w: 9,
        min: 0,
        description: 'Current connections (wowza_server_connections) and the configured maximum (dashed) when one is set.',
        targets: [prom(`wowza_server_connections{${SRV}}`, 'connections'), prom(`wowza_server_connections_limit{${SRV}} > 0`, 'limit')],
        overrides: [dashed('^limit$')],
      }),
      timeseries({
        title: 'Incoming streams and limit',
        unit: 'short',
        w: 9,
        min: 0,
        description: 'Incoming streams over all application instances (wowza_instance_incoming_streams, transcoder renditions included) and the configured maximum (dashed) when one is set.',
        targets: [prom(`sum by (server) (wowza_instance_incoming_streams{${SRV}})`, 'incoming streams'), prom(`wowza_server_incoming_streams_limit{${SRV}} > 0`, 'limit')],
        overrides: [dashed('^limit$')],
      }),
    ]),
    row('Machine', [
      timeseries({
        title: 'CPU by mode',
        unit: 'percentunit',
        min: 0,
        max: 1,
        stack: true,
        description: 'Machine CPU time by mode, idle left out (wowza_machine_cpu_ratio; Wowza reports integer percents).',
        targets: [prom(`wowza_machine_cpu_ratio{${SRV},mode!="idle"}`, '{{mode}}')],
      }),
      timeseries({
        title: 'Java heap',
        unit: 'bytes',
        min: 0,
        description: 'Java heap in use (wowza_machine_heap_used_bytes) and the maximum heap (dashed, wowza_server_java_heap_max_bytes).',
        targets: [prom(`wowza_machine_heap_used_bytes{${SRV}}`, 'used'), prom(`wowza_server_java_heap_max_bytes{${SRV}}`, 'maximum')],
        overrides: [dashed('^maximum$')],
      }),
      timeseries({
        title: 'Memory',
        unit: 'bytes',
        min: 0,
        stack: true,
        description: 'Machine memory used and free (wowza_machine_memory_used_bytes, wowza_machine_memory_free_bytes).',
        targets: [prom(`wowza_machine_memory_used_bytes{${SRV}}`, 'used'), prom(`wowza_machine_memory_free_bytes{${SRV}}`, 'free')],
      }),
      timeseries({
        title: 'Disk',
        unit: 'bytes',
        min: 0,
        description: 'Disk space used and free (wowza_machine_disk_used_bytes, wowza_machine_disk_free_bytes), and the free space predicted 24 hours ahead from the last 6 hours (dashed).',
        targets: [
          prom(`wowza_machine_disk_used_bytes{${SRV}}`, 'used'),
          prom(`wowza_machine_disk_free_bytes{${SRV}}`, 'free'),
          prom(`predict_linear(wowza_machine_disk_free_bytes{${SRV}}[6h], 24 * 3600)`, 'free in 24h (predicted)'),
        ],
        overrides: [dashed('predicted')],
      }),
      timeseries({
        title: 'Connections by protocol',
        unit: 'short',
        stack: true,
        description: 'Current connections of the selected virtual hosts by protocol (wowza_vhost_connections).',
        targets: [prom(`sum by (protocol) (wowza_vhost_connections{${V}})`, '{{protocol}}')],
      }),
      timeseries({
        title: 'Transcoder licences',
        unit: 'short',
        min: 0,
        description: 'Transcoder licences in use and available (dashed) (wowza_server_transcoder_licenses_in_use, wowza_server_transcoder_licenses).',
        targets: [prom(`wowza_server_transcoder_licenses_in_use{${SRV}}`, 'in use'), prom(`wowza_server_transcoder_licenses{${SRV}} > 0`, 'licences')],
        overrides: [dashed('^licences$')],
      }),
    ]),
    row('Virtual hosts', [
      timeseries({
        title: 'Connections per virtual host',
        unit: 'short',
        description: 'Current connections of each virtual host, all protocols (wowza_vhost_connections_current).',
        targets: [prom(`wowza_vhost_connections_current{${V}}`, '{{vhost}}')],
      }),
      timeseries({
        title: 'Bandwidth per virtual host',
        unit: 'bps',
        description: 'Bits per second received (above the axis) and sent (below) by each virtual host (wowza_vhost_received_bytes_total, wowza_vhost_sent_bytes_total).',
        targets: [
          prom(`rate(wowza_vhost_received_bytes_total{${V}}[$__rate_interval]) * 8`, '{{vhost}} in'),
          prom(`rate(wowza_vhost_sent_bytes_total{${V}}[$__rate_interval]) * 8`, '{{vhost}} out'),
        ],
        overrides: [negativeY('.* out$')],
      }),
    ]),
    row('Applications', [
      timeseries({
        title: 'Connections per application',
        unit: 'short',
        description: 'Current connections of each application, all protocols (wowza_application_connections_current).',
        targets: [prom(`wowza_application_connections_current{${A}}`, '{{vhost}}/{{application}}')],
      }),
      timeseries({
        title: 'Connections per application and protocol',
        unit: 'short',
        stack: true,
        description: 'Current connections of each application by protocol (wowza_application_connections).',
        targets: [prom(`sum by (application, protocol) (wowza_application_connections{${A}})`, '{{application}} {{protocol}}')],
      }),
      timeseries({
        title: 'Bandwidth per application',
        unit: 'bps',
        description: 'Bits per second received (above the axis) and sent (below) by each application (wowza_application_received_bytes_total, wowza_application_sent_bytes_total).',
        targets: [
          prom(`rate(wowza_application_received_bytes_total{${A}}[$__rate_interval]) * 8`, '{{application}} in'),
          prom(`rate(wowza_application_sent_bytes_total{${A}}[$__rate_interval]) * 8`, '{{application}} out'),
        ],
        overrides: [negativeY('.* out$')],
      }),
      table({
        title: 'Applications',
        unit: 'none',
        description: 'Applications with their type and features (wowza_application_info). An application type of "unknown" means the server sent none.',
        targets: [prom(`wowza_application_info{${A}}`, '', { instant: true })],
        hide: ['Value', 'job', 'instance', 'server'],
        columns: { vhost: 'Virtual host', application: 'Application', app_type: 'Type', dvr: 'DVR', transcoder: 'Transcoder', drm: 'DRM' },
      }),
    ]),
  ],
});

