// The shared panel kit of the dashboards: datasources, variables, panel builders, grid layout.

export const PROM = { type: 'prometheus', uid: '${datasource}' };
export const LOKI = { type: 'loki', uid: '${loki_datasource}' };

// Label matchers shared by the queries of a dashboard.
export const JOB = 'job=~"$job"';
export const SRV = `${JOB},server=~"$server"`;

// ---------------------------------------------------------------------------------------------------
// Template variables

export function datasourceVariable(name, label, pluginId) {
  return { name, label, type: 'datasource', query: pluginId, current: {}, hide: 0, includeAll: false, multi: false, options: [], refresh: 1, regex: '' };
}

/** A Prometheus label_values() variable. `All` is `.+` so that a selection does not list every value. */
export function labelVariable(name, label, query, { multi = true, includeAll = true } = {}) {
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

export function customVariable(name, label, values, current) {
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

export function textboxVariable(name, label, description) {
  return { name, label, description, type: 'textbox', query: '', current: { text: '', value: '' }, hide: 0, options: [] };
}

export const jobVariable = labelVariable('job', 'Job', 'label_values(wowza_up, job)');
export const serversVariable = labelVariable('server', 'Server', `label_values(wowza_up{${JOB}}, server)`);

// ---------------------------------------------------------------------------------------------------
// Queries and panels

/** A Prometheus query; `instant` for tables, bar gauges and stats that show one value per series. */
export function prom(expr, legendFormat = '__auto', { instant = false } = {}) {
  return { datasource: PROM, expr, legendFormat, range: !instant, instant };
}

export const thresholds = (steps = []) => ({ mode: 'absolute', steps: [{ color: 'green', value: null }, ...steps] });
export const warnAbove = (warn, crit) => thresholds([{ color: 'orange', value: warn }, { color: 'red', value: crit }]);

export const serverLink = {
  title: 'Server detail for ${__field.labels.server}',
  url: '/d/wowza-server/wowza-server-detail?${__url_time_range}&${datasource:queryparam}&${job:queryparam}&var-server=${__field.labels.server}',
};

export function base(type, { title, description, unit, targets, w = 12, h = 8, datasource = PROM }) {
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

export function timeseries(opts) {
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

export function stat(opts) {
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

export function bargauge(opts) {
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
export function table(opts) {
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
export function stateTimeline(opts) {
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
export function logs(opts) {
  const p = base('logs', { ...opts, datasource: LOKI });
  delete p.fieldConfig;
  p.options = { showTime: true, showLabels: false, showCommonLabels: false, wrapLogMessage: true, prettifyLogMessage: false, enableLogDetails: true, dedupStrategy: 'none', sortOrder: 'Descending' };
  return p;
}

/** Draws series whose display name matches `regex` below the axis (bandwidth out under bandwidth in). */
export const negativeY = (regex) => ({ matcher: { id: 'byRegexp', options: regex }, properties: [{ id: 'custom.transform', value: 'negative-Y' }] });
/** Limits and maxima as dashed lines without fill. */
export const dashed = (regex) => ({
  matcher: { id: 'byRegexp', options: regex },
  properties: [
    { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
    { id: 'custom.fillOpacity', value: 0 },
    { id: 'custom.stacking', value: { mode: 'none', group: 'A' } },
    { id: 'color', value: { mode: 'fixed', fixedColor: 'red' } },
  ],
});

export function row(title, panels, { collapsed = false } = {}) {
  return { title, collapsed, panels };
}

// ---------------------------------------------------------------------------------------------------
// Layout and the dashboard model

/** Places rows and their panels on the 24-column grid, left to right, wrapping at the edge. */
export function layout(rows) {
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

export function dashboard({ uid, title, description, variables, rows, refresh = '30s', time = 'now-6h' }) {
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

