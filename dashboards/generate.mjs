#!/usr/bin/env node
/**
 * Generates the Grafana dashboards in this folder (Grafana JSON model, Grafana 11 and later).
 *
 *   node dashboards/generate.mjs          rewrite the JSON files
 *   node dashboards/generate.mjs --check  exit 1 when a JSON file differs from what this script makes
 *
 * The JSON is committed so Grafana can import or provision it as is; this script keeps the four
 * dashboards consistent (datasource variable on every query, a unit and a description on every panel,
 * $__rate_interval in rates) instead of four hand-edited files drifting apart. Edit here, not in the JSON.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { writeDashboardConfigMaps } from '../deploy/kubernetes/components/kube-prometheus-stack/generate-dashboards.mjs';

const PROM = { type: 'prometheus', uid: '${datasource}' };
const LOKI = { type: 'loki', uid: '${loki_datasource}' };

// Label matchers shared by the queries of a dashboard.
const JOB = 'job=~"$job"';
const SRV = `${JOB},server=~"$server"`;

// ---------------------------------------------------------------------------------------------------
// Template variables

function datasourceVariable(name, label, pluginId) {
  return { name, label, type: 'datasource', query: pluginId, current: {}, hide: 0, includeAll: false, multi: false, options: [], refresh: 1, regex: '' };
}

/** A Prometheus label_values() variable. `All` is `.+` so that a selection does not list every value. */
function labelVariable(name, label, query, { multi = true, includeAll = true } = {}) {
  return {
    name,
    label,
    type: 'query',
    datasource: PROM,
    query,
    definition: query,
    refresh: 2,
    sort: 1,
    multi,
    includeAll,
    ...(includeAll ? { allValue: '.+' } : {}),
    current: {},
    hide: 0,
    options: [],
    regex: '',
  };
}

function customVariable(name, label, values, current) {
  return {
    name,
    label,
    type: 'custom',
    query: values.join(','),
    current: { text: current, value: current },
    options: values.map((v) => ({ text: v, value: v, selected: v === current })),
    hide: 0,
    multi: false,
    includeAll: false,
  };
}

function textboxVariable(name, label, description) {
  return { name, label, description, type: 'textbox', query: '', current: { text: '', value: '' }, hide: 0, options: [] };
}

const jobVariable = labelVariable('job', 'Job', 'label_values(wowza_up, job)');
const serversVariable = labelVariable('server', 'Server', `label_values(wowza_up{${JOB}}, server)`);

// ---------------------------------------------------------------------------------------------------
// Queries and panels

/** A Prometheus query; `instant` for tables, bar gauges and stats that show one value per series. */
function prom(expr, legendFormat = '__auto', { instant = false } = {}) {
  return { datasource: PROM, expr, legendFormat, range: !instant, instant };
}

const thresholds = (steps = []) => ({ mode: 'absolute', steps: [{ color: 'green', value: null }, ...steps] });
const warnAbove = (warn, crit) => thresholds([{ color: 'orange', value: warn }, { color: 'red', value: crit }]);

const serverLink = {
  title: 'Server detail for ${__field.labels.server}',
  url: '/d/wowza-server/wowza-server-detail?${__url_time_range}&${datasource:queryparam}&${job:queryparam}&var-server=${__field.labels.server}',
};

function base(type, { title, description, unit, targets, w = 12, h = 8, datasource = PROM }) {
  if (!description) throw new Error(`panel "${title}" needs a description`);
  return {
    type,
    title,
    description,
    datasource,
    gridPos: { w, h },
    targets: targets.map((t, i) => ({ refId: String.fromCharCode(65 + i), ...t })),
    fieldConfig: { defaults: { unit }, overrides: [] },
  };
}

function timeseries(opts) {
  const p = base('timeseries', opts);
  p.fieldConfig.defaults = {
    ...p.fieldConfig.defaults,
    ...(opts.min !== undefined ? { min: opts.min } : {}),
    ...(opts.max !== undefined ? { max: opts.max } : {}),
    ...(opts.links ? { links: opts.links } : {}),
    color: { mode: 'palette-classic' },
    thresholds: opts.thresholds ?? thresholds(),
    custom: {
      drawStyle: 'line',
      lineWidth: 1,
      fillOpacity: opts.stack ? 30 : 10,
      showPoints: 'never',
      spanNulls: false,
      axisSoftMin: 0,
      stacking: { mode: opts.stack ? 'normal' : 'none', group: 'A' },
      thresholdsStyle: { mode: opts.thresholds ? 'line' : 'off' },
    },
  };
  p.fieldConfig.overrides = opts.overrides ?? [];
  p.options = {
    legend: { displayMode: 'table', placement: 'bottom', showLegend: true, calcs: ['lastNotNull', 'max'] },
    tooltip: { mode: 'multi', sort: 'desc' },
  };
  return p;
}

function stat(opts) {
  const p = base('stat', { w: 4, h: 4, ...opts });
  p.fieldConfig.defaults = {
    ...p.fieldConfig.defaults,
    color: { mode: 'thresholds' },
    thresholds: opts.thresholds ?? thresholds(),
    mappings: opts.mappings ?? [],
    ...(opts.links ? { links: opts.links } : {}),
  };
  p.options = {
    reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
    colorMode: 'value',
    graphMode: opts.graph ? 'area' : 'none',
    justifyMode: 'auto',
    orientation: 'auto',
    textMode: opts.textMode ?? 'auto',
  };
  return p;
}

function bargauge(opts) {
  const p = base('bargauge', opts);
  p.fieldConfig.defaults = {
    ...p.fieldConfig.defaults,
    ...(opts.min !== undefined ? { min: opts.min } : {}),
    ...(opts.max !== undefined ? { max: opts.max } : {}),
    ...(opts.links ? { links: opts.links } : {}),
    color: { mode: 'thresholds' },
    thresholds: opts.thresholds ?? thresholds(),
  };
  p.options = {
    reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
    orientation: 'horizontal',
    displayMode: 'gradient',
    showUnfilled: true,
    valueMode: 'color',
    namePlacement: 'auto',
    sizing: 'auto',
  };
  return p;
}

/** A table of instant queries; `columns` renames (and orders) fields, `hide` drops them. */
function table(opts) {
  // One row per series, labels as columns.
  const p = base('table', { ...opts, targets: opts.targets.map((t) => ({ ...t, format: 'table' })) });
  p.fieldConfig.defaults = {
    ...p.fieldConfig.defaults,
    custom: { align: 'auto', cellOptions: { type: 'auto' }, filterable: true },
    thresholds: opts.thresholds ?? thresholds(),
    mappings: opts.mappings ?? [],
  };
  p.fieldConfig.overrides = opts.overrides ?? [];
  p.options = { showHeader: true, cellHeight: 'sm', footer: { show: false, reducer: ['sum'], fields: '' }, sortBy: opts.sortBy ?? [] };
  const hide = Object.fromEntries(['Time', '__name__', ...(opts.hide ?? [])].map((f) => [f, true]));
  const names = opts.columns ?? {};
  p.transformations = [
    ...(p.targets.length > 1 ? [{ id: 'merge', options: {} }] : []),
    {
      id: 'organize',
      options: {
        excludeByName: hide,
        indexByName: Object.fromEntries(Object.keys(names).map((f, i) => [f, i])),
        renameByName: names,
      },
    },
  ];
  return p;
}

/** 0/1 series as coloured bands over time. */
function stateTimeline(opts) {
  const p = base('state-timeline', opts);
  const [off, on] = opts.states;
  p.fieldConfig.defaults = {
    ...p.fieldConfig.defaults,
    color: { mode: 'thresholds' },
    thresholds: thresholds(),
    mappings: [{ type: 'value', options: { 0: { text: off, color: 'red', index: 0 }, 1: { text: on, color: 'green', index: 1 } } }],
    custom: { fillOpacity: 80, lineWidth: 0 },
  };
  p.options = { mergeValues: true, showValue: 'never', alignValue: 'left', rowHeight: 0.9, legend: { displayMode: 'list', placement: 'bottom', showLegend: false }, tooltip: { mode: 'single', sort: 'none' } };
  return p;
}

/** Loki log lines; needs the exporter's loki sink. No unit: a logs panel shows text, not numbers. */
function logs(opts) {
  const p = base('logs', { ...opts, datasource: LOKI });
  delete p.fieldConfig;
  p.options = { showTime: true, showLabels: false, showCommonLabels: false, wrapLogMessage: true, prettifyLogMessage: false, enableLogDetails: true, dedupStrategy: 'none', sortOrder: 'Descending' };
  return p;
}

/** Draws series whose display name matches `regex` below the axis (bandwidth out under bandwidth in). */
const negativeY = (regex) => ({ matcher: { id: 'byRegexp', options: regex }, properties: [{ id: 'custom.transform', value: 'negative-Y' }] });
/** Limits and maxima as dashed lines without fill. */
const dashed = (regex) => ({
  matcher: { id: 'byRegexp', options: regex },
  properties: [
    { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
    { id: 'custom.fillOpacity', value: 0 },
    { id: 'custom.stacking', value: { mode: 'none', group: 'A' } },
    { id: 'color', value: { mode: 'fixed', fixedColor: 'red' } },
  ],
});

function row(title, panels, { collapsed = false } = {}) {
  return { title, collapsed, panels };
}

// ---------------------------------------------------------------------------------------------------
// Layout and the dashboard model

/** Places rows and their panels on the 24-column grid, left to right, wrapping at the edge. */
function layout(rows) {
  const out = [];
  let y = 0;
  let id = 1;
  for (const r of rows) {
    const rowPanel = { type: 'row', title: r.title, id: id++, collapsed: r.collapsed, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] };
    out.push(rowPanel);
    y += 1;
    let x = 0;
    let rowHeight = 0;
    for (const p of r.panels) {
      if (x + p.gridPos.w > 24) {
        y += rowHeight;
        x = 0;
        rowHeight = 0;
      }
      const placed = { id: id++, ...p, gridPos: { ...p.gridPos, x, y } };
      // A collapsed row holds its panels; an expanded row is followed by them.
      if (r.collapsed) rowPanel.panels.push(placed);
      else out.push(placed);
      x += p.gridPos.w;
      rowHeight = Math.max(rowHeight, p.gridPos.h);
    }
    y += rowHeight;
  }
  return out;
}

function dashboard({ uid, title, description, variables, rows, refresh = '30s', time = 'now-6h' }) {
  return {
    uid,
    title,
    description,
    tags: ['wowza', 'wowza-exporter'],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    refresh,
    time: { from: time, to: 'now' },
    timepicker: {},
    timezone: 'browser',
    fiscalYearStartMonth: 0,
    liveNow: false,
    weekStart: '',
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    links: [{ title: 'Wowza dashboards', type: 'dashboards', tags: ['wowza'], asDropdown: true, includeVars: true, keepTime: true, icon: 'external link', targetBlank: false, tooltip: '', url: '' }],
    templating: { list: variables },
    panels: layout(rows),
  };
}

// ---------------------------------------------------------------------------------------------------
// Fleet overview

const fleet = dashboard({
  uid: 'wowza-fleet',
  title: 'Wowza / Fleet overview',
  description: 'Every Wowza Streaming Engine server the exporter watches: availability, load, connections against limits, licences and upcoming Wowza Video schedule actions. Needs the recording rules in deploy/prometheus/rules/wowza.rules.yml.',
  variables: [datasourceVariable('datasource', 'Prometheus', 'prometheus'), jobVariable, serversVariable],
  rows: [
    row('Availability', [
      stat({ title: 'Servers up', unit: 'none', description: 'Servers whose REST API the exporter reached and authenticated against in its last poll (wowza_up).', targets: [prom(`sum(wowza_up{${SRV}})`)] }),
      stat({
        title: 'Servers down',
        unit: 'none',
        description: 'Servers the exporter could not reach or authenticate against in its last poll (wowza_up == 0). The WowzaServerDown alert fires after 5 minutes.',
        thresholds: thresholds([{ color: 'red', value: 1 }]),
        targets: [prom(`count(wowza_up{${SRV}} == 0) or vector(0)`)],
      }),
      stat({
        title: 'Collectors failing',
        unit: 'none',
        description: 'Collector runs (per server) whose last poll failed; their series are absent until the next successful poll (wowza_exporter_collector_success == 0).',
        thresholds: thresholds([{ color: 'orange', value: 1 }]),
        targets: [prom(`count(wowza_exporter_collector_success{${SRV}} == 0) or vector(0)`)],
      }),
      stat({ title: 'Connections', unit: 'short', graph: true, description: 'Current connections over all selected servers, all protocols (wowza_server_connections).', targets: [prom(`sum(wowza_server_connections{${SRV}})`)] }),
      stat({ title: 'Streams connected', unit: 'short', graph: true, description: 'Incoming streams reported connected, renditions not counted (wowza_stream_connected).', targets: [prom(`sum(wowza_stream_connected{${SRV},rendition=""})`)] }),
      stat({ title: 'Transcoder licences in use', unit: 'short', graph: true, description: 'Transcoder licences in use over all selected servers (wowza_server_transcoder_licenses_in_use).', targets: [prom(`sum(wowza_server_transcoder_licenses_in_use{${SRV}})`)] }),
      stateTimeline({
        title: 'Server availability',
        unit: 'none',
        w: 12,
        h: 8,
        states: ['down', 'up'],
        description: 'Whether each server answered the exporter (wowza_up) over time. Click a server for its detail dashboard.',
        targets: [prom(`wowza_up{${SRV}}`, '{{server}}')],
      }),
      table({
        title: 'Servers',
        unit: 'none',
        w: 12,
        h: 8,
        description: 'Version, licence type and mode of each server (wowza_server_info, from the status collector). Click a server for its detail dashboard.',
        targets: [prom(`wowza_server_info{${SRV}}`, '', { instant: true })],
        hide: ['Value', 'build'],
        columns: { server: 'Server', version: 'Version', license_type: 'Licence', mode: 'Mode', job: 'Job', instance: 'Exporter' },
        overrides: [{ matcher: { id: 'byName', options: 'Server' }, properties: [{ id: 'links', value: [serverLink] }] }],
      }),
    ]),
    row('Load', [
      timeseries({
        title: 'CPU busy',
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: thresholds([{ color: 'red', value: 0.9 }]),
        links: [serverLink],
        description: 'Share of machine CPU time not idle (wowza:machine_cpu_busy:ratio = 1 - idle, from /v2/machine/monitoring/current). The WowzaHighCPU alert fires above 90% for 10 minutes.',
        targets: [prom(`wowza:machine_cpu_busy:ratio{${SRV}}`, '{{server}}')],
      }),
      timeseries({
        title: 'Java heap used of maximum',
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: thresholds([{ color: 'red', value: 0.9 }]),
        links: [serverLink],
        description: 'Java heap in use relative to the maximum heap (wowza:java_heap_used:ratio). Saw teeth are garbage collection; a floor rising towards 100% means trouble (WowzaJavaHeapHigh).',
        targets: [prom(`wowza:java_heap_used:ratio{${SRV}}`, '{{server}}')],
      }),
      timeseries({
        title: 'Memory used',
        unit: 'percentunit',
        min: 0,
        max: 1,
        links: [serverLink],
        description: 'Share of machine memory in use (wowza:machine_memory_used:ratio).',
        targets: [prom(`wowza:machine_memory_used:ratio{${SRV}}`, '{{server}}')],
      }),
      timeseries({
        title: 'Disk used',
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: thresholds([{ color: 'orange', value: 0.8 }, { color: 'red', value: 0.95 }]),
        links: [serverLink],
        description: 'Share of disk space in use (wowza:machine_disk_used:ratio). WowzaDiskFillingUp and WowzaDiskFull predict the trend.',
        targets: [prom(`wowza:machine_disk_used:ratio{${SRV}}`, '{{server}}')],
      }),
    ]),
    row('Connections and bandwidth', [
      timeseries({
        title: 'Connections and limit',
        unit: 'short',
        min: 0,
        links: [serverLink],
        description: 'Current connections per server, and the configured maximum (dashed) where one is set; 0 means unlimited and is not drawn.',
        targets: [prom(`wowza_server_connections{${SRV}}`, '{{server}}'), prom(`wowza_server_connections_limit{${SRV}} > 0`, '{{server}} limit')],
        overrides: [dashed('.* limit$')],
      }),
      bargauge({
        title: 'Share of connection limit used',
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: warnAbove(0.8, 0.9),
        links: [serverLink],
        description: 'Connections as a share of the configured maximum, for servers that have one (wowza:server_connections_limit_used:ratio). WowzaConnectionsNearLimit fires above 90%.',
        targets: [prom(`wowza:server_connections_limit_used:ratio{${SRV}}`, '{{server}}', { instant: true })],
      }),
      timeseries({
        title: 'Connections by protocol',
        unit: 'short',
        stack: true,
        description: 'Current connections over all selected servers by protocol (wowza_vhost_connections; hls is CUPERTINO, hds SANJOSE, rtsp RTP).',
        targets: [prom(`sum by (protocol) (wowza_vhost_connections{${SRV}})`, '{{protocol}}')],
      }),
      timeseries({
        title: 'Bandwidth in and out',
        unit: 'bps',
        links: [serverLink],
        description: 'Bits per second received (above the axis) and sent (below) per server, from the virtual host byte counters.',
        targets: [
          prom(`sum by (server) (rate(wowza_vhost_received_bytes_total{${SRV}}[$__rate_interval])) * 8`, '{{server}} in'),
          prom(`sum by (server) (rate(wowza_vhost_sent_bytes_total{${SRV}}[$__rate_interval])) * 8`, '{{server}} out'),
        ],
        overrides: [negativeY('.* out$')],
      }),
    ]),
    row('Licences', [
      bargauge({
        title: 'Licence expires in',
        unit: 'dtdurations',
        thresholds: { mode: 'absolute', steps: [{ color: 'red', value: null }, { color: 'orange', value: 14 * 86400 }, { color: 'green', value: 30 * 86400 }] },
        links: [serverLink],
        description: 'Time until the Wowza licence of each server expires (wowza_server_license_expiry_timestamp_seconds). Servers whose licence has no expiry date are not listed. WowzaLicenseExpiringSoon fires within 14 days.',
        targets: [prom(`wowza_server_license_expiry_timestamp_seconds{${SRV}} - time()`, '{{server}}', { instant: true })],
      }),
      timeseries({
        title: 'Transcoder licences',
        unit: 'short',
        min: 0,
        links: [serverLink],
        description: 'Transcoder licences in use per server and the licences available (dashed), for servers that have any. WowzaTranscoderLicensesExhausted fires when all are in use.',
        targets: [
          prom(`wowza_server_transcoder_licenses_in_use{${SRV}}`, '{{server}}'),
          prom(`wowza_server_transcoder_licenses{${SRV}} > 0`, '{{server}} licences'),
        ],
        overrides: [dashed('.* licences$')],
      }),
    ]),
    row('Wowza Video schedules', [
      stat({
        title: 'Enabled schedules',
        unit: 'none',
        w: 4,
        h: 8,
        description: 'Wowza Video (hosted) schedules that are enabled (wowza_video_schedule_enabled); disabled and expired ones count 0. Needs the video collector and a Wowza Video token.',
        targets: [prom(`sum(wowza_video_schedule_enabled{${JOB}})`)],
      }),
      table({
        title: 'Upcoming schedule actions',
        unit: 'dateTimeAsIso',
        w: 20,
        h: 8,
        description: 'Next start and stop of each Wowza Video schedule with its transcoder (wowza_video_schedule_next_start/stop_timestamp_seconds joined with wowza_video_schedule_info). A schedule without an upcoming action is not listed. There is no alert for a start that did not happen: the API shows schedules, not transcoder state.',
        targets: [
          prom(`1000 * wowza_video_schedule_next_start_timestamp_seconds{${JOB}} * on (job, instance, schedule_id) group_left (name, transcoder_id, action_type, recurrence_type, state) wowza_video_schedule_info{${JOB}}`, '', { instant: true }),
          prom(`1000 * wowza_video_schedule_next_stop_timestamp_seconds{${JOB}} * on (job, instance, schedule_id) group_left (name, transcoder_id, action_type, recurrence_type, state) wowza_video_schedule_info{${JOB}}`, '', { instant: true }),
        ],
        hide: ['job', 'instance'],
        columns: {
          name: 'Schedule',
          'Value #A': 'Next start',
          'Value #B': 'Next stop',
          action_type: 'Action',
          recurrence_type: 'Recurrence',
          state: 'State',
          transcoder_id: 'Transcoder',
          schedule_id: 'Schedule id',
        },
        sortBy: [{ displayName: 'Next start', desc: false }],
      }),
    ]),
    row(
      'Exporter',
      [
        stateTimeline({
          title: 'Collector status',
          unit: 'none',
          states: ['failing', 'ok'],
          description: "Each collector's last poll per server (wowza_exporter_collector_success). A failing collector publishes no series for that server; WowzaCollectorFailing fires after 15 minutes.",
          targets: [prom(`wowza_exporter_collector_success{${SRV}}`, '{{server}} {{collector}}')],
        }),
        timeseries({
          title: 'Collector duration',
          unit: 's',
          description: 'How long the last poll of each collector took (wowza_exporter_collector_duration_seconds). Polls run under a deadline of 90% of their interval.',
          targets: [prom(`wowza_exporter_collector_duration_seconds{${SRV}}`, '{{server}} {{collector}}')],
        }),
        timeseries({
          title: 'REST API requests by status',
          unit: 'reqps',
          stack: true,
          description: 'Requests the exporter sends to the Wowza REST API, by HTTP status or error kind (timeout, network, tls, too_large) (wowza_exporter_api_requests_total).',
          targets: [prom(`sum by (server, code) (rate(wowza_exporter_api_requests_total{${SRV}}[$__rate_interval]))`, '{{server}} {{code}}')],
        }),
        timeseries({
          title: 'Age of the last successful poll',
          unit: 's',
          description: 'Seconds since each collector last polled successfully (time() - wowza_exporter_last_poll_timestamp_seconds).',
          targets: [prom(`time() - wowza_exporter_last_poll_timestamp_seconds{${SRV}}`, '{{server}} {{collector}}')],
        }),
        stat({
          title: 'Streams dropped by the cap',
          unit: 'none',
          w: 6,
          description: 'Streams left out of the last poll because a server has more than discovery.max_streams_per_server (wowza_exporter_streams_dropped).',
          thresholds: thresholds([{ color: 'orange', value: 1 }]),
          targets: [prom(`sum(wowza_exporter_streams_dropped{${SRV}})`)],
        }),
      ],
      { collapsed: true },
    ),
  ],
});

// ---------------------------------------------------------------------------------------------------
// Server detail

const V = `${SRV},vhost=~"$vhost"`;
const A = `${V},application=~"$application"`;

const server = dashboard({
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

// ---------------------------------------------------------------------------------------------------
// Streams

const ST = `${SRV},application=~"$application",stream=~"$stream"`;
const STREAM_LEGEND = '{{server}} {{application}}/{{stream}}';

const streams = dashboard({
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

// ---------------------------------------------------------------------------------------------------
// Logs

const L = `${SRV},log_type=~"$log_type"`;
const LINES = 'suffix:lines/s';

const logsDashboard = dashboard({
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

// ---------------------------------------------------------------------------------------------------

export const DASHBOARDS = {
  'wowza-fleet.json': fleet,
  'wowza-server.json': server,
  'wowza-streams.json': streams,
  'wowza-logs.json': logsDashboard,
};

const PLUGIN_NAMES = { prometheus: 'Prometheus', loki: 'Loki' };
const PANEL_NAMES = { timeseries: 'Time series', stat: 'Stat', table: 'Table', logs: 'Logs', gauge: 'Gauge', bargauge: 'Bar gauge', text: 'Text', 'state-timeline': 'State timeline', row: 'Row' };

/**
 * The dashboard as Grafana's "Export for sharing externally" writes it, for grafana.com and Import: `__inputs` make the
 * import ask for a Prometheus (and Loki) datasource, `__requires` say what it needs, and each datasource variable
 * starts at the datasource picked there.
 */
function forSharing(model) {
  const inputs = [];
  const variables = model.templating.list.map((v) => {
    if (v.type !== 'datasource') return v;
    const input = `DS_${v.query.toUpperCase()}`;
    inputs.push({ name: input, label: PLUGIN_NAMES[v.query] ?? v.query, description: v.label, type: 'datasource', pluginId: v.query, pluginName: PLUGIN_NAMES[v.query] ?? v.query });
    return { ...v, current: { selected: false, text: `\${${input}}`, value: `\${${input}}` } };
  });
  const panelTypes = new Set();
  const walk = (panels) => {
    for (const p of panels ?? []) {
      panelTypes.add(p.type);
      walk(p.panels);
    }
  };
  walk(model.panels);
  const requires = [
    { type: 'grafana', id: 'grafana', name: 'Grafana', version: '11.0.0' },
    ...inputs.map((i) => ({ type: 'datasource', id: i.pluginId, name: i.pluginName, version: '1.0.0' })),
    ...[...panelTypes].filter((t) => t !== 'row').sort().map((t) => ({ type: 'panel', id: t, name: PANEL_NAMES[t] ?? t, version: '' })),
  ];
  const { id: _id, ...rest } = model;
  return { __inputs: inputs, __elements: {}, __requires: requires, ...rest, id: null, templating: { list: variables } };
}

/** Every file the generator writes, path relative to this directory -> text. */
function outputs() {
  const out = new Map();
  for (const [file, model] of Object.entries(DASHBOARDS)) {
    out.set(file, `${JSON.stringify(model, null, 2)}\n`);
    out.set(`grafana.com/${file}`, `${JSON.stringify(forSharing(model), null, 2)}\n`);
  }
  return out;
}

function main(argv) {
  const check = argv.includes('--check');
  const stale = [];
  mkdirSync(fileURLToPath(new URL('grafana.com/', import.meta.url)), { recursive: true });
  for (const [file, text] of outputs()) {
    const path = fileURLToPath(new URL(file, import.meta.url));
    if (check) {
      let current = '';
      try {
        current = readFileSync(path, 'utf8');
      } catch {
        // missing counts as stale
      }
      if (current !== text) stale.push(file);
    } else {
      writeFileSync(path, text);
    }
  }
  if (stale.length > 0) {
    process.stderr.write(`dashboards out of date: ${stale.join(', ')}; run \`node dashboards/generate.mjs\`\n`);
    process.exit(1);
  }
  // The kube-prometheus-stack component ships them as ConfigMaps: kept in step here.
  if (!check) writeDashboardConfigMaps();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
