// The logs dashboard (wowza-logs.json).
import { LOKI, SRV, datasourceVariable, labelVariable, textboxVariable, jobVariable, serversVariable, prom, thresholds, timeseries, stat, logs, row, dashboard } from './kit.mjs';

// ---------------------------------------------------------------------------------------------------
// Logs

const L = `${SRV},log_type=~"$log_type"`;
const LINES = 'suffix:lines/s';

export const logsDashboard = dashboard({
  uid: 'wowza-logs',
  title: 'Wowza / Logs',
  description: 'Metrics of the log followers and sinks, and the log lines themselves from Loki (stream labels server, log_type, severity).',
  time: 'now-3h',
  variables: [
    datasourceVariable('datasource', 'Prometheus', 'prometheus'),
    datasourceVariable('loki_datasource', 'Loki', 'loki'),
    jobVariable,
    serversVariable,
    labelVariable('log_type', 'Log type', `label_values(wowza_log_lines_total{${SRV}}, log_type)`),
    labelVariable('severity', 'Severity', `label_values(wowza_log_lines_total{${L}}, severity)`),
    textboxVariable('search', 'Search', 'Regular expression the Loki lines must match (empty: all lines).'),
  ],
  rows: [
    row('Log lines', [
      stat({
        title: 'ERROR lines in range',
        unit: 'short',
        w: 6,
        description: 'ERROR lines read in the selected time range (increase of wowza_log_lines_total over $__range).',
        thresholds: thresholds([{ color: 'orange', value: 1 }]),
        targets: [prom(`sum(increase(wowza_log_lines_total{${L},severity=~"(?i)error"}[$__range]))`, '', { instant: true })],
      }),
      stat({
        title: 'WARN lines in range',
        unit: 'short',
        w: 6,
        description: 'WARN lines read in the selected time range (increase of wowza_log_lines_total over $__range).',
        targets: [prom(`sum(increase(wowza_log_lines_total{${L},severity=~"(?i)warn"}[$__range]))`, '', { instant: true })],
      }),
      stat({
        title: 'Unparsable lines in range',
        unit: 'short',
        w: 6,
        description: 'Lines that could not be parsed completely in the selected time range; they are shipped with a parse_error field (wowza_log_parse_errors_total).',
        thresholds: thresholds([{ color: 'orange', value: 1 }]),
        targets: [prom(`sum(increase(wowza_log_parse_errors_total{${L}}[$__range]))`, '', { instant: true })],
      }),
      stat({
        title: 'Dead-lettered lines in range',
        unit: 'short',
        w: 6,
        description: 'Lines a sink refused for good in the selected time range, written to the dead-letter file (wowza_log_dead_letter_lines_total).',
        thresholds: thresholds([{ color: 'red', value: 1 }]),
        targets: [prom(`sum(increase(wowza_log_dead_letter_lines_total{${L}}[$__range]))`, '', { instant: true })],
      }),
      timeseries({
        title: 'Lines by severity',
        unit: LINES,
        stack: true,
        description: 'Log lines read per second by severity (wowza_log_lines_total). WowzaErrorLogSpike fires when ERROR lines triple.',
        targets: [prom(`sum by (severity) (rate(wowza_log_lines_total{${L},severity=~"$severity"}[$__rate_interval]))`, '{{severity}}')],
      }),
      timeseries({
        title: 'Lines by server and log type',
        unit: LINES,
        description: 'Log lines read per second by server and log type (wowza_log_lines_total).',
        targets: [prom(`sum by (server, log_type) (rate(wowza_log_lines_total{${L},severity=~"$severity"}[$__rate_interval]))`, '{{server}} {{log_type}}')],
      }),
      timeseries({
        title: 'Events',
        unit: 'suffix:events/s',
        w: 24,
        description: 'Log records per second by category and event (wowza_log_events_total): connect, play, publish, unpublish and the rest; values outside the known sets count as other.',
        targets: [prom(`sum by (category, event) (rate(wowza_log_events_total{${L}}[$__rate_interval]))`, '{{category}} {{event}}')],
      }),
    ]),
    row('Follower', [
      timeseries({
        title: 'Follower lag',
        unit: 's',
        w: 8,
        description: 'Seconds between now and the timestamp of the last record read (wowza_log_follower_lag_seconds). It also grows while a log is quiet.',
        targets: [prom(`wowza_log_follower_lag_seconds{${L}}`, '{{server}} {{log_type}}')],
      }),
      timeseries({
        title: 'Read position',
        unit: 'bytes',
        w: 8,
        description: 'Byte offset each follower reads its log file from next (wowza_log_follower_offset_bytes); it drops to 0 at rotation.',
        targets: [prom(`wowza_log_follower_offset_bytes{${L}}`, '{{server}} {{log_type}}')],
      }),
      timeseries({
        title: 'Failed log reads',
        unit: 'reqps',
        w: 8,
        description: 'Failed reads of the logs through the REST API per second (wowza_log_follower_read_failures_total).',
        targets: [prom(`sum by (server, log_type) (rate(wowza_log_follower_read_failures_total{${L}}[$__rate_interval]))`, '{{server}} {{log_type}}')],
      }),
    ]),
    row('Forwarding', [
      timeseries({
        title: 'Lines forwarded per sink',
        unit: LINES,
        w: 8,
        description: 'Lines each sink acknowledged per second (wowza_log_forwarded_lines_total). Positions advance only after every sink acknowledged.',
        targets: [prom(`sum by (sink) (rate(wowza_log_forwarded_lines_total{${L}}[$__rate_interval]))`, '{{sink}}')],
      }),
      timeseries({
        title: 'Delivery failures per sink',
        unit: 'suffix:failures/s',
        w: 8,
        description: 'Failed delivery attempts per second, retries included (wowza_log_forward_failures_total). WowzaLogForwardingFailing fires when nothing gets through.',
        targets: [prom(`sum by (sink) (rate(wowza_log_forward_failures_total{${L}}[$__rate_interval]))`, '{{sink}}')],
      }),
      timeseries({
        title: 'Queue per sink',
        unit: 'suffix:lines',
        w: 8,
        description: 'Lines waiting for each sink or being sent (wowza_log_forward_queue_lines). When the queue is full the follower pauses instead of dropping lines; WowzaLogForwardQueueGrowing fires when it keeps growing.',
        targets: [prom(`sum by (server, log_type, sink) (wowza_log_forward_queue_lines{${L}})`, '{{server}} {{log_type}} {{sink}}')],
      }),
    ]),
    row('Log lines (Loki)', [
      logs({
        title: 'Log lines',
        w: 24,
        h: 16,
        description: 'Needs Loki: the lines the exporter shipped with its loki sink, newest first, filtered by server, log type, severity and the search expression. Each line is the parsed record in JSON.',
        targets: [{ datasource: LOKI, expr: '{server=~"$server", log_type=~"$log_type", severity=~"$severity"} |~ `$search`', queryType: 'range' }],
      }),
    ]),
  ],
});

