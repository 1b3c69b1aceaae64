// The streams dashboard (wowza-streams.json).
import { SRV, datasourceVariable, labelVariable, customVariable, jobVariable, serversVariable, prom, thresholds, timeseries, stat, bargauge, table, stateTimeline, row, dashboard } from './kit.mjs';

// ---------------------------------------------------------------------------------------------------
// Streams

const ST = `${SRV},application=~"$application",stream=~"$stream"`;
const STREAM_LEGEND = '{{server}} {{application}}/{{stream}}';
// Recorders and stream targets follow the application picked; their own names are not streams.
const APP = `${SRV},application=~"$application"`;
const RECORDER_LEGEND = '{{server}} {{application}}/{{recorder}}';
const TARGET_LEGEND = '{{server}} {{application}}/{{entry}}';

export const streams = dashboard({
  uid: 'wowza-streams',
  title: 'Wowza / Streams',
  description: 'Incoming streams: connected state, ingest and egress bitrate, viewers by protocol, the busiest streams. Renditions are counted under their base stream for egress and viewers and left out of ingest.',
  variables: [
    datasourceVariable('datasource', 'Prometheus', 'prometheus'),
    jobVariable,
    serversVariable,
    labelVariable('application', 'Application', `label_values(wowza_stream_connected{${SRV}}, application)`),
    labelVariable('stream', 'Stream', `label_values(wowza_stream_connected{${SRV},application=~"$application"}, stream)`),
    customVariable('topn', 'Top N', ['5', '10', '20', '50'], '10'),
  ],
  rows: [
    row('Overview', [
      stat({ title: 'Streams connected', unit: 'none', graph: true, description: 'Incoming streams reported connected, renditions left out (wowza_stream_connected).', targets: [prom(`sum(wowza_stream_connected{${ST},rendition=""})`)] }),
      stat({
        title: 'Streams not connected',
        unit: 'none',
        description: 'Listed streams that are not connected, such as pulled or Stream Manager streams waiting for their source (wowza_stream_connected == 0).',
        thresholds: thresholds([{ color: 'orange', value: 1 }]),
        targets: [prom(`count(wowza_stream_connected{${ST},rendition=""} == 0) or vector(0)`)],
      }),
      stat({ title: 'Recording', unit: 'none', description: 'Streams with recording set (wowza_stream_recording).', targets: [prom(`sum(wowza_stream_recording{${ST},rendition=""})`)] }),
      stat({ title: 'Viewers', unit: 'short', graph: true, description: 'Current connections to the selected streams and their renditions, all protocols (wowza_stream_connections_current).', targets: [prom(`sum(wowza_stream_connections_current{${ST}})`)] }),
      stat({ title: 'Ingest', unit: 'bps', graph: true, description: 'Bits per second received by the selected streams, renditions left out (wowza_stream_received_bytes_total).', targets: [prom(`sum(rate(wowza_stream_received_bytes_total{${ST},rendition=""}[$__rate_interval])) * 8`)] }),
      stat({ title: 'Egress', unit: 'bps', graph: true, description: 'Bits per second sent for the selected streams and their renditions (wowza_stream_sent_bytes_total).', targets: [prom(`sum(rate(wowza_stream_sent_bytes_total{${ST}}[$__rate_interval])) * 8`)] }),
    ]),
    row('State', [
      stateTimeline({
        title: 'Connected',
        unit: 'none',
        h: 10,
        states: ['not connected', 'connected'],
        description: 'Connected state of each incoming stream over time (wowza_stream_connected). A stream that leaves the instance list leaves a gap; WowzaExpectedStreamDown fires for streams named in expected_streams that are not connected.',
        targets: [prom(`wowza_stream_connected{${ST},rendition=""}`, STREAM_LEGEND)],
      }),
      table({
        title: 'Streams',
        unit: 'dtdurations',
        h: 10,
        description: 'Streams measured by the stream collector with their uptime, source scheme (never the source URL) and whether Stream Manager created them (wowza_stream_info, wowza_stream_uptime_seconds).',
        targets: [prom(`wowza_stream_info{${ST},rendition=""} * ignoring (source_scheme, stream_manager) group_left wowza_stream_uptime_seconds{${ST},rendition=""}`, '', { instant: true })],
        hide: ['job', 'instance', 'app_instance', 'vhost'],
        columns: { server: 'Server', application: 'Application', stream: 'Stream', Value: 'Uptime', source_scheme: 'Source', stream_manager: 'Stream Manager' },
        sortBy: [{ displayName: 'Uptime', desc: true }],
      }),
    ]),
    row('Traffic', [
      timeseries({
        title: 'Ingest bitrate per stream',
        unit: 'bps',
        description: 'Bits per second each stream receives from its encoder or source, renditions left out (wowza_stream_received_bytes_total).',
        targets: [prom(`sum by (server, application, stream) (rate(wowza_stream_received_bytes_total{${ST},rendition=""}[$__rate_interval])) * 8`, STREAM_LEGEND)],
      }),
      timeseries({
        title: 'Egress bitrate per stream',
        unit: 'bps',
        description: 'Bits per second sent to viewers of each stream, its renditions included (wowza_stream_sent_bytes_total).',
        targets: [prom(`sum by (server, application, stream) (rate(wowza_stream_sent_bytes_total{${ST}}[$__rate_interval])) * 8`, STREAM_LEGEND)],
      }),
      timeseries({
        title: 'Viewers by protocol',
        unit: 'short',
        stack: true,
        description: 'Current connections to the selected streams by protocol (wowza_stream_connections).',
        targets: [prom(`sum by (protocol) (wowza_stream_connections{${ST}})`, '{{protocol}}')],
      }),
      timeseries({
        title: 'Viewers per stream',
        unit: 'short',
        description: 'Current connections to each stream and its renditions, all protocols (wowza_stream_connections_current).',
        targets: [prom(`sum by (server, application, stream) (wowza_stream_connections_current{${ST}})`, STREAM_LEGEND)],
      }),
    ]),
    row('Recordings', [
      stateTimeline({
        title: 'Recording',
        unit: 'none',
        w: 12,
        states: ['not recording', 'recording'],
        description: 'Whether each stream recorder is recording (wowza_stream_recorder_recording, from recorderState). WowzaRecordingStopped fires when one stops while its stream is still connected.',
        targets: [prom(`wowza_stream_recorder_recording{${APP}}`, RECORDER_LEGEND)],
      }),
      timeseries({
        title: 'Recording growth',
        unit: 'bps',
        w: 8,
        description: 'Bits per second each recorder adds to the file it writes (wowza_stream_recorder_current_size_bytes): flat while recording means nothing reaches the file.',
        targets: [prom(`sum by (server, application, recorder) (rate(wowza_stream_recorder_current_size_bytes{${APP}}[$__rate_interval])) * 8`, RECORDER_LEGEND)],
      }),
      stat({
        title: 'Recorder errors',
        unit: 'none',
        w: 4,
        description: 'Recorders reporting an error now (wowza_stream_recorder_error; the message is on the exporter status page and in its log). WowzaRecorderError fires on each.',
        thresholds: thresholds([{ color: 'red', value: 1 }]),
        targets: [prom(`count(wowza_stream_recorder_error{${APP}} == 1) or vector(0)`)],
      }),
    ]),
    row('Stream targets', [
      stateTimeline({
        title: 'Stream target active',
        unit: 'none',
        w: 12,
        states: ['not pushing', 'pushing'],
        description: 'Whether each stream target (push publishing entry) is pushing (wowza_stream_target_active, sessionStatus Active). WowzaStreamTargetDown fires for an enabled one that is not while its source stream is connected.',
        targets: [prom(`wowza_stream_target_active{${APP}}`, TARGET_LEGEND)],
      }),
      table({
        title: 'Stream targets',
        unit: 's',
        w: 12,
        description: 'Each stream target with its destination, its status as Wowza words it, and how long ago it last pushed within the last day (wowza_stream_target_status, wowza_stream_target_active). Never its stream name or keys: the exporter does not keep them.',
        targets: [
          prom(
            `(time() - max_over_time(timestamp(wowza_stream_target_active{${APP}} == 1)[1d:15s])) * on (job, instance, server, vhost, application, entry) group_right wowza_stream_target_status{${APP}}`,
            '',
            { instant: true },
          ),
        ],
        hide: ['job', 'instance', 'vhost', '__name__'],
        columns: { server: 'Server', application: 'Application', entry: 'Target', source_stream: 'Source', profile: 'Profile', host: 'Destination', status: 'Status', Value: 'Last pushed (ago)' },
        sortBy: [{ displayName: 'Last pushed (ago)', desc: true }],
      }),
    ]),
    row('Top streams', [
      bargauge({
        title: 'Top $topn streams by viewers',
        unit: 'short',
        w: 8,
        h: 10,
        description: 'The streams with the most current connections, renditions included (wowza_stream_connections_current).',
        targets: [prom(`topk($topn, sum by (server, application, stream) (wowza_stream_connections_current{${ST}}))`, STREAM_LEGEND, { instant: true })],
      }),
      bargauge({
        title: 'Top $topn streams by egress',
        unit: 'bps',
        w: 8,
        h: 10,
        description: 'The streams sending the most bits per second, renditions included (wowza_stream_sent_bytes_total).',
        targets: [prom(`topk($topn, sum by (server, application, stream) (rate(wowza_stream_sent_bytes_total{${ST}}[$__rate_interval])) * 8)`, STREAM_LEGEND, { instant: true })],
      }),
      bargauge({
        title: 'Top $topn streams by ingest',
        unit: 'bps',
        w: 8,
        h: 10,
        description: 'The streams receiving the most bits per second, renditions left out (wowza_stream_received_bytes_total).',
        targets: [prom(`topk($topn, sum by (server, application, stream) (rate(wowza_stream_received_bytes_total{${ST},rendition=""}[$__rate_interval])) * 8)`, STREAM_LEGEND, { instant: true })],
      }),
    ]),
  ],
});

