/**
 * Every metric the collectors publish, with its type and help text: the one place names live.
 * The contract is docs/metrics.md; renaming anything here is a breaking change.
 */
export type MetricType = 'gauge' | 'counter' | 'histogram';

export interface MetricDef {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  /** A share from 0 to 1: a value above 1 is out of range. (Below 0 is implausible for every Wowza metric.) */
  readonly ratio?: boolean;
}

function def(name: string, type: MetricType, help: string, opts: { ratio?: boolean } = {}): MetricDef {
  return { name, type, help, ...opts };
}

export const M = {
  up: def('wowza_up', 'gauge', '1 when the last poll of the server reached it and it answered as the WSE REST API (the expected JSON, Wowza\'s error envelope, or accepted credentials), else 0.'),

  machineCpu: def('wowza_machine_cpu_ratio', 'gauge', 'Machine CPU time share by mode (cpuIdle, cpuUser, cpuSystem / 100).', { ratio: true }),
  machineMemoryFree: def('wowza_machine_memory_free_bytes', 'gauge', 'Free machine memory.'),
  machineMemoryUsed: def('wowza_machine_memory_used_bytes', 'gauge', 'Used machine memory.'),
  machineHeapFree: def('wowza_machine_heap_free_bytes', 'gauge', 'Free Java heap of the Wowza process.'),
  machineHeapUsed: def('wowza_machine_heap_used_bytes', 'gauge', 'Used Java heap of the Wowza process.'),
  machineDiskFree: def('wowza_machine_disk_free_bytes', 'gauge', 'Free disk space.'),
  machineDiskUsed: def('wowza_machine_disk_used_bytes', 'gauge', 'Used disk space.'),
  machineUptime: def('wowza_machine_uptime_seconds', 'gauge', 'Wowza server uptime as reported by machine monitoring.'),
  machineConnections: def('wowza_machine_connections', 'gauge', 'Current connections as reported by machine monitoring.'),

  serverInfo: def('wowza_server_info', 'gauge', 'Wowza server version, build, licence type and mode (value 1).'),
  serverUptime: def('wowza_server_uptime_seconds', 'gauge', 'Time the Wowza server has been running.'),
  serverConnections: def('wowza_server_connections', 'gauge', 'Current connections to the server.'),
  serverConnectionsLimit: def('wowza_server_connections_limit', 'gauge', 'Configured maximum connections (0 = unlimited).'),
  serverIncomingStreamsLimit: def('wowza_server_incoming_streams_limit', 'gauge', 'Configured maximum incoming streams (0 = unlimited).'),
  serverLicenseExpiry: def('wowza_server_license_expiry_timestamp_seconds', 'gauge', 'Licence expiry date as a Unix timestamp (absent when the licence has no date).'),
  serverTranscoderLicenses: def('wowza_server_transcoder_licenses', 'gauge', 'Transcoder licences available.'),
  serverTranscoderLicensesInUse: def('wowza_server_transcoder_licenses_in_use', 'gauge', 'Transcoder licences in use.'),
  serverJavaHeapMax: def('wowza_server_java_heap_max_bytes', 'gauge', 'Maximum Java heap size of the Wowza process.'),
  serverMemoryTotal: def('wowza_server_memory_total_bytes', 'gauge', 'Total memory of the server.'),
  serverMemoryAvailable: def('wowza_server_memory_available_bytes', 'gauge', 'Available memory of the server.'),
  serverProcessorCores: def('wowza_server_processor_cores', 'gauge', 'Processor cores of the server.'),
  serverFeatureLicensed: def('wowza_server_feature_licensed', 'gauge', 'Whether the server is licensed for a feature (transcoder, dvr, drm): 1 or 0.'),
  serverFeatureInUse: def('wowza_server_feature_in_use', 'gauge', 'Whether a feature is in use (dvr, drm; transcoder while licences are in use): 1 or 0.'),
  serverFeatureAvailable: def('wowza_server_feature_available', 'gauge', 'Whether a feature is available on the server (transcoder, rest_api, http_origin): 1 or 0.'),
  serverFeatureApplications: def('wowza_server_feature_applications', 'gauge', 'Applications the server lists as using a feature (transcoder, dvr, drm).'),

  vhostInfo: def('wowza_vhost_info', 'gauge', 'Virtual host connection settings (value 1).'),
  vhostUptime: def('wowza_vhost_uptime_seconds', 'gauge', 'Virtual host uptime.'),
  vhostConnections: def('wowza_vhost_connections', 'gauge', 'Current virtual host connections by protocol.'),
  vhostConnectionsTotal: def('wowza_vhost_connections_current', 'gauge', 'Current virtual host connections over all protocols.'),
  vhostReceived: def('wowza_vhost_received_bytes_total', 'counter', 'Bytes received by the virtual host since it started.'),
  vhostSent: def('wowza_vhost_sent_bytes_total', 'counter', 'Bytes sent by the virtual host since it started.'),
  vhostReceiveRate: def('wowza_vhost_receive_bytes_per_second', 'gauge', 'Virtual host receive rate as reported by Wowza.'),
  vhostSendRate: def('wowza_vhost_send_bytes_per_second', 'gauge', 'Virtual host send rate as reported by Wowza.'),

  applicationInfo: def('wowza_application_info', 'gauge', 'Application type and feature flags (value 1).'),
  applicationUptime: def('wowza_application_uptime_seconds', 'gauge', 'Application uptime.'),
  applicationConnections: def('wowza_application_connections', 'gauge', 'Current application connections by protocol.'),
  applicationConnectionsTotal: def('wowza_application_connections_current', 'gauge', 'Current application connections over all protocols.'),
  applicationReceived: def('wowza_application_received_bytes_total', 'counter', 'Bytes received by the application since it started.'),
  applicationSent: def('wowza_application_sent_bytes_total', 'counter', 'Bytes sent by the application since it started.'),
  applicationReceiveRate: def('wowza_application_receive_bytes_per_second', 'gauge', 'Application receive rate as reported by Wowza.'),
  applicationSendRate: def('wowza_application_send_bytes_per_second', 'gauge', 'Application send rate as reported by Wowza.'),

  instanceIncomingStreams: def('wowza_instance_incoming_streams', 'gauge', 'Incoming streams of the application instance.'),
  instanceOutgoingStreams: def('wowza_instance_outgoing_streams', 'gauge', 'Outgoing streams of the application instance.'),
  instanceRecorders: def('wowza_instance_recorders', 'gauge', 'Recorders of the application instance.'),

  recorderRecording: def('wowza_stream_recorder_recording', 'gauge', '1 while the stream recorder says it is recording (recorderState), else 0.'),
  recorderInfo: def('wowza_stream_recorder_info', 'gauge', 'Stream recorder facts (value 1): state as Wowza words it, file format, segmentation type.'),
  recorderSize: def('wowza_stream_recorder_current_size_bytes', 'gauge', 'Size of the file the stream recorder is writing.'),
  recorderDuration: def('wowza_stream_recorder_current_duration_seconds', 'gauge', 'Duration of the current recording (currentDuration, ms in the API).'),
  recorderStart: def('wowza_stream_recorder_start_timestamp_seconds', 'gauge', 'When the current recording started (recordingStartTime), Unix seconds; absent while not recording.'),
  recorderError: def('wowza_stream_recorder_error', 'gauge', '1 while the stream recorder reports an error (recorderErrorString; the message is on the status page and in the log), else 0.'),

  targetEnabled: def('wowza_stream_target_enabled', 'gauge', '1 when the stream target (push publishing map entry) is enabled, else 0.'),
  targetActive: def('wowza_stream_target_active', 'gauge', '1 while the stream target is pushing (sessionStatus Active), else 0.'),
  targetStatus: def('wowza_stream_target_status', 'gauge', 'The stream target\'s sessionStatus as Wowza words it (value 1, one series for the current status).'),

  streamExpected: def('wowza_stream_expected', 'gauge', '1 for each stream the configuration names in expected_streams, whether it is live, gone or never seen.'),
  streamConnected: def('wowza_stream_connected', 'gauge', '1 when the incoming stream is connected, else 0.'),
  streamRecording: def('wowza_stream_recording', 'gauge', '1 when recording is set for the incoming stream, else 0.'),
  streamInfo: def('wowza_stream_info', 'gauge', 'Incoming stream facts: source scheme (never the source URL) and Stream Manager origin (value 1).'),
  streamUptime: def('wowza_stream_uptime_seconds', 'gauge', 'Incoming stream uptime.'),
  streamConnections: def('wowza_stream_connections', 'gauge', 'Current connections to the stream by protocol.'),
  streamConnectionsTotal: def('wowza_stream_connections_current', 'gauge', 'Current connections to the stream over all protocols.'),
  streamReceived: def('wowza_stream_received_bytes_total', 'counter', 'Bytes received for the stream since it started.'),
  streamSent: def('wowza_stream_sent_bytes_total', 'counter', 'Bytes sent for the stream since it started.'),
  streamReceiveRate: def('wowza_stream_receive_bytes_per_second', 'gauge', 'Stream receive rate (ingest bitrate) as reported by Wowza.'),
  streamSendRate: def('wowza_stream_send_bytes_per_second', 'gauge', 'Stream send rate (egress) as reported by Wowza.'),
  streamsDropped: def('wowza_exporter_streams_dropped', 'gauge', 'Streams left out of the last poll by the per-server stream cap.'),
  connectionCountsUnmatched: def(
    'wowza_exporter_connectioncounts_unmatched_streams',
    'gauge',
    'Streams of the last connectioncounts document that match no incoming stream discovery kept (VOD files being played, streams filtered out or over the cap, names that differ).',
  ),

  videoScheduleInfo: def('wowza_video_schedule_info', 'gauge', 'Wowza Video schedule facts (value 1).'),
  videoScheduleEnabled: def('wowza_video_schedule_enabled', 'gauge', '1 when the Wowza Video schedule is enabled, 0 when disabled or expired.'),
  videoScheduleNextStart: def('wowza_video_schedule_next_start_timestamp_seconds', 'gauge', 'Next time the schedule starts its transcoder (absent when none).'),
  videoScheduleNextStop: def('wowza_video_schedule_next_stop_timestamp_seconds', 'gauge', 'Next time the schedule stops its transcoder (absent when none).'),
} as const satisfies Record<string, MetricDef>;

/** Per-probe copies of the self metrics: a /probe answer is built in a fresh set, never from the shared registry. */
export const PROBE = {
  collectorSuccess: def('wowza_exporter_collector_success', 'gauge', "1 when the collector's last poll succeeded, else 0 (its series are then absent)."),
  collectorDuration: def('wowza_exporter_collector_duration_seconds', 'gauge', "Duration of the collector's last poll."),
  probeDuration: def('wowza_exporter_probe_duration_seconds', 'gauge', 'Duration of the whole probe.'),
  probeDroppedValues: def('wowza_exporter_probe_dropped_values', 'gauge', 'Values this probe left out instead of exporting them (missing, unreadable, negative, out_of_range), by API field.'),
} as const satisfies Record<string, MetricDef>;
