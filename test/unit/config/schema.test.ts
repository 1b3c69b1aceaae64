import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { loadConfig } from '../../../src/config/load.js';
import { ConfigSchema } from '../../../src/config/schema.js';
import { loadWebConfig } from '../../../src/http/web-config.js';
import { createSinks } from '../../../src/logs/sinks/create-sinks.js';

/**
 * Every key of the config schema, set wrong in turn, must be refused with a ConfigError (exit code 2 in
 * the CLI) whose every line names that key. The table is checked against the schema itself: a key added
 * without a case here fails the first test.
 */

const dir = mkdtempSync(join(tmpdir(), 'wowza-config-fields-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MISSING = join(dir, 'does-not-exist');
const secret = (name: string) => {
  const p = join(dir, name);
  writeFileSync(p, 'fine-secret\n');
  chmodSync(p, 0o600);
  return p;
};
const NOT_PEM = secret('not-a-certificate.pem');
const A_DIRECTORY = join(dir, 'a-directory');
mkdirSync(A_DIRECTORY);

type Doc = Record<string, unknown>;

/** Keys as `servers[].url`, `collectors.<key>`, `logs.sinks[loki].url`: objects, records, arrays, sink types. */
function schemaKeys(schema: z.ZodType): string[] {
  const keys = new Set<string>();
  const walk = (s: z.ZodType, path: string): void => {
    const def = (s as unknown as { def: Record<string, unknown> }).def;
    switch (def.type) {
      case 'optional':
      case 'default':
      case 'prefault':
      case 'nullable':
        return walk(def.innerType as z.ZodType, path);
      case 'pipe':
        return walk(def.in as z.ZodType, path);
      case 'object':
        for (const [k, v] of Object.entries(def.shape as Record<string, z.ZodType>)) {
          const p = path === '' ? k : `${path}.${k}`;
          keys.add(p);
          walk(v, p);
        }
        return;
      case 'array':
        return walk(def.element as z.ZodType, `${path}[]`);
      case 'record':
        keys.add(`${path}.<key>`);
        return walk(def.valueType as z.ZodType, `${path}.<key>`);
      case 'union':
        for (const option of def.options as z.ZodType[]) {
          if (def.discriminator === undefined) walk(option, path);
          else walk(option, path.replace(/\[\]$/, `[${literalOf(option, def.discriminator as string)}]`));
        }
        return;
      default:
        return;
    }
  };
  walk(schema, '');
  return [...keys].sort();
}

function literalOf(option: z.ZodType, key: string): string {
  let def = (option as unknown as { def: Record<string, unknown> }).def;
  while (def.type === 'pipe') def = (def.in as unknown as { def: Record<string, unknown> }).def;
  const shape = def.shape as Record<string, { def: { values: unknown[] } }>;
  return String(shape[key]!.def.values[0]);
}

const URL_OK = 'http://127.0.0.1:8087';
const server = (fields: Doc): Doc => ({ servers: [{ url: URL_OK, ...fields }] });
const module = (fields: Doc): Doc => ({ modules: { default: { allowed_targets: ['http://wowza:8087'], ...fields } } });
const logs = (fields: Doc): Doc => ({ logs: { positions_file: join(dir, 'positions.json'), dead_letter_file: join(dir, 'dead.ndjson'), ...fields } });
const sink = (fields: Doc): Doc => logs({ sinks: [fields] });
const loki = (fields: Doc): Doc => sink({ type: 'loki', url: 'http://127.0.0.1:3100', ...fields });
const fileSink = (fields: Doc): Doc => sink({ type: 'file', path: join(dir, 'records.ndjson'), ...fields });
const httpSink = (fields: Doc): Doc => sink({ type: 'http', url: 'http://127.0.0.1:9000/logs', ...fields });

interface Case {
  /** The schema key this case sets wrong. */
  key: string;
  doc: Doc;
  /** The key as the message must name it. */
  names: string;
  /** What the message must also say. */
  says?: RegExp;
}

const c = (key: string, doc: Doc, names: string, says?: RegExp): Case => ({ key, doc, names, says });

const CASES: Case[] = [
  c('servers', { servers: 'wowza:8087' }, 'servers', /array/),
  c('servers[].name', server({ name: '' }), 'servers[0].name'),
  c('servers[].name', { servers: [{ url: URL_OK, name: 'a' }, { url: 'http://other:8087', name: 'a' }] }, 'servers[1].name', /used twice/),
  c('servers[].url', { servers: [{ name: 'a' }] }, 'servers[0].url'),
  c('servers[].url', server({ url: 'wowza:8087' }), 'servers[0].url', /http or https/),
  c('servers[].url', server({ url: 'ftp://wowza:21' }), 'servers[0].url', /http or https/),
  c('servers[].url', server({ url: 'http://wowza:99999' }), 'servers[0].url', /not a URL/),
  c('servers[].url', server({ url: 'http://admin:pw@wowza:8087' }), 'servers[0].url', /credentials/),
  c('servers[].username', server({ username: 42 }), 'servers[0].username', /string/),
  c('servers[].password_file', server({ password_file: MISSING }), 'servers[0].password_file', /cannot read .*ENOENT/),
  c('servers[].password_file', server({ password_file: emptyFile('empty-password') }), 'servers[0].password_file', /empty/),
  c('servers[].auth', server({ auth: 'ntlm' }), 'servers[0].auth', /auto|basic|digest/),
  c('servers[].timeout', server({ timeout: '5 seconds' }), 'servers[0].timeout', /invalid duration/),
  c('servers[].connectioncounts_url', server({ connectioncounts_url: 'http://admin:pw@wowza:8086/connectioncounts' }), 'servers[0].connectioncounts_url', /credentials do not belong in the URL/),
  c('servers[].timeout', server({ timeout: '20s' }), 'servers[0].timeout', /shorter than the poll deadline of poll\.interval 15s \(13\.5s|13500ms/),
  c('servers[].server_name', server({ server_name: '' }), 'servers[0].server_name'),
  c('servers[].expected_streams', server({ expected_streams: 'live/cam1' }), 'servers[0].expected_streams', /array/),
  c('servers[].expected_streams', server({ expected_streams: ['cam1'] }), 'servers[0].expected_streams[0]', /application\/stream/),
  c('servers[].expected_streams', server({ expected_streams: ['live//cam1'] }), 'servers[0].expected_streams[0]', /application\/stream/),
  c('servers[].log_time_zone', server({ log_time_zone: 'Mars/Olympus' }), 'servers[0].log_time_zone', /unknown time zone/),
  c('servers[].expected_streams', server({ expected_streams: ['live/cam1', 'live/_definst_/cam1'] }), 'servers[0].expected_streams[1]', /listed twice/),
  c('servers[].tls', server({ tls: true }), 'servers[0].tls', /object/),
  c('servers[].tls.ca_file', server({ tls: { ca_file: MISSING } }), 'servers[0].tls.ca_file', /cannot read .*ENOENT/),
  c('servers[].tls.ca_file', server({ tls: { ca_file: NOT_PEM } }), 'servers[0].tls.ca_file', /no PEM certificate/),
  c('servers[].tls.insecure_skip_verify', server({ tls: { insecure_skip_verify: 'sure' } }), 'servers[0].tls.insecure_skip_verify', /boolean/),
  c('servers[].max_response_size', server({ max_response_size: '32 potatoes' }), 'servers[0].max_response_size', /invalid size/),
  c('servers[].max_list_items', server({ max_list_items: 0 }), 'servers[0].max_list_items', /too small|>0|positive/i),

  c('web', { web: ':9935' }, 'web', /object/),
  c('web.listen_address', { web: { listen_address: 'localhost' } }, 'web.listen_address', /\[host\]:port/),
  c('web.listen_address', { web: { listen_address: '127.0.0.1:99999' } }, 'web.listen_address', /port out of range/),
  c('web.config_file', { web: { config_file: MISSING } }, 'web.config.file', /cannot read/),
  c('web.enable_lifecycle', { web: { enable_lifecycle: 'yes' } }, 'web.enable_lifecycle', /boolean/),
  c('web.listen_address', { web: { listen_address: [] } }, 'web.listen_address', /at least one/),
  c('web.listen_address', { web: { listen_address: [':9935', 'nowhere'] } }, 'web.listen_address', /\[host\]:port/),
  c('web.listen_address', { web: { listen_address: 9935 } }, 'web.listen_address', /9935 is a number, not an address: write ":9935" \(every address\) or "127.0.0.1:9935"/),
  c('web.telemetry_path', { web: { telemetry_path: 'metrics' } }, 'web.telemetry_path', /starts with \//),
  c('web.telemetry_path', { web: { telemetry_path: '/-/healthy' } }, 'web.telemetry_path', /exporter's own paths/),
  c('web.systemd_socket', { web: { systemd_socket: 'yes' } }, 'web.systemd_socket', /boolean/),
  c('web.allowed_hosts', { web: { allowed_hosts: ['http://exporter.example:9935'] } }, 'web.allowed_hosts', /not a host name or IP address/),
  c('web.max_connections', { web: { max_connections: 0 } }, 'web.max_connections'),

  c('poll', { poll: 15 }, 'poll', /object/),
  c('poll.interval', { poll: { interval: '15 seconds' } }, 'poll.interval', /invalid duration/),
  c('poll.timeout', { poll: { timeout: 'soon' } }, 'poll.timeout', /invalid duration/),
  c('poll.timeout', { poll: { interval: '10s', timeout: '10s' } }, 'poll.timeout', /shorter than the poll deadline of poll\.interval 10s \(9s/),
  c('poll.concurrency', { poll: { concurrency: 0 } }, 'poll.concurrency'),
  c('poll.concurrency', { poll: { concurrency: 2.5 } }, 'poll.concurrency', /use auto or a whole number from 1 to 256/),
  c('poll.concurrency', { poll: { concurrency: 'fast' } }, 'poll.concurrency', /use auto or a whole number/),
  c('poll.concurrency_max', { poll: { concurrency_max: 0 } }, 'poll.concurrency_max'),
  c('poll.jitter', { poll: { jitter: 2 } }, 'poll.jitter'),
  c('poll.max_requests_per_second', { poll: { max_requests_per_second: -1 } }, 'poll.max_requests_per_second', /too small|>=0/),

  c('collectors', { collectors: ['machine'] }, 'collectors'),
  c('collectors.<key>', { collectors: { strem: false } }, 'collectors.strem', /did you mean "stream"/),
  c('collectors.<key>', { collectors: { stream: 'yes' } }, 'collectors.stream'),
  c('collectors.<key>.enabled', { collectors: { stream: { enabled: 'yes' } } }, 'collectors.stream'),
  c('collectors.<key>.interval', { collectors: { stream: { interval: 'hourly' } } }, 'collectors.stream'),

  c('discovery', { discovery: 'all' }, 'discovery', /object/),
  c('discovery.vhosts', { discovery: { vhosts: '.*' } }, 'discovery.vhosts', /object/),
  c('discovery.vhosts.include', { discovery: { vhosts: { include: '([' } } }, 'discovery.vhosts.include', /regular expression/),
  c('discovery.vhosts.exclude', { discovery: { vhosts: { exclude: '*' } } }, 'discovery.vhosts.exclude', /regular expression/),
  c('discovery.applications', { discovery: { applications: ['live'] } }, 'discovery.applications', /object/),
  c('discovery.applications.include', { discovery: { applications: { include: '([' } } }, 'discovery.applications.include', /regular expression/),
  c('discovery.applications.exclude', { discovery: { applications: { exclude: '(?<' } } }, 'discovery.applications.exclude', /regular expression/),
  c('discovery.streams', { discovery: { streams: 5 } }, 'discovery.streams', /object/),
  c('discovery.streams.include', { discovery: { streams: { include: '[z-a]' } } }, 'discovery.streams.include', /regular expression/),
  c('discovery.streams.exclude', { discovery: { streams: { exclude: 7 } } }, 'discovery.streams.exclude', /string/),
  c('discovery.renditions', { discovery: { renditions: 'label' } }, 'discovery.renditions', /object/),
  c('discovery.renditions.mode', { discovery: { renditions: { mode: 'merge' } } }, 'discovery.renditions.mode', /label|drop|stream/),
  c('discovery.renditions.suffix_pattern', { discovery: { renditions: { suffix_pattern: '(' } } }, 'discovery.renditions.suffix_pattern', /regular expression/),
  c('discovery.max_streams_per_server', { discovery: { max_streams_per_server: 0 } }, 'discovery.max_streams_per_server'),
  c('discovery.max_series_per_server', { discovery: { max_series_per_server: 0 } }, 'discovery.max_series_per_server'),
  c('discovery.max_bytes_per_server', { discovery: { max_bytes_per_server: 100 } }, 'discovery.max_bytes_per_server'),

  c('modules', { modules: ['default'] }, 'modules'),
  c('modules.<key>', { modules: { default: 'admin' } }, 'modules.default', /object/),
  c('modules.<key>.username', module({ username: ['admin'] }), 'modules.default.username', /string/),
  c('modules.<key>.password_file', module({ password_file: MISSING }), 'modules.default.password_file', /cannot read .*ENOENT/),
  c('modules.<key>.auth', module({ auth: 'kerberos' }), 'modules.default.auth', /auto|basic|digest/),
  c('modules.<key>.timeout', module({ timeout: '-1s' }), 'modules.default.timeout', /duration/),
  c('modules.<key>.server_name', module({ server_name: '' }), 'modules.default.server_name'),
  c('modules.<key>.tls', module({ tls: 'on' }), 'modules.default.tls', /object/),
  c('modules.<key>.tls.ca_file', module({ tls: { ca_file: MISSING } }), 'modules.default.tls.ca_file', /cannot read .*ENOENT/),
  c('modules.<key>.tls.insecure_skip_verify', module({ tls: { insecure_skip_verify: 1 } }), 'modules.default.tls.insecure_skip_verify', /boolean/),
  c('modules.<key>.max_response_size', module({ max_response_size: 'huge' }), 'modules.default.max_response_size', /invalid size/),
  c('modules.<key>.max_list_items', module({ max_list_items: 'many' }), 'modules.default.max_list_items', /number/i),
  c('modules.<key>.allowed_targets', { modules: { default: { username: 'admin', allowed_targets: 'http://wowza:8087' } } }, 'modules.default.allowed_targets'),
  c('servers_files', { servers_files: 'targets/*.yaml' }, 'servers_files'),
  c('servers_files', { servers_files: ['/etc/*/targets.yaml'] }, 'servers_files[0]', /only the file name may hold \* and \?/),
  c('servers_files_refresh_interval', { servers_files_refresh_interval: 'often' }, 'servers_files_refresh_interval', /invalid duration/),
  c('max_servers', { max_servers: 0 }, 'max_servers', /too small|>0|positive/i),
  c('shard', { shard: '0/2' }, 'shard'),
  c('shard.index', { shard: { index: 2, count: 2 } }, 'shard.index', /must be below shard\.count/),
  c('shard.count', { shard: { index: 0, count: 0 } }, 'shard.count'),
  c('modules.<key>.allowed_targets', module({ allowed_targets: ['http://(wowza'] }), 'modules.default.allowed_targets[0]', /regular expression/),

  c('video', { video: 'https://api.video.wowza.com' }, 'video', /object/),
  c('video.url', { video: { url: 'api.video.wowza.com' } }, 'video.url'),
  c('video.url', { video: { url: 'https://user:pw@api.video.wowza.com/api/v1.11' } }, 'video.url', /credentials/),
  c('video.token_file', { video: { token_file: MISSING } }, 'video.token_file', /cannot read .*ENOENT/),
  c('video.token_file', { video: { token_file: tokenWithSpaces() } }, 'video.token_file', /whitespace/),
  c('video.interval', { video: { interval: 'daily' } }, 'video.interval', /invalid duration/),

  c('logs', { logs: true }, 'logs', /object/),
  c('logs.positions_file', logs({ positions_file: '' }), 'logs.positions_file'),
  c('logs.positions_file', logs({ positions_file: A_DIRECTORY }), 'logs.positions_file', /is a directory/),
  c('logs.positions_sync_interval', logs({ positions_sync_interval: 'often' }), 'logs.positions_sync_interval', /invalid duration/),
  c('logs.follow_interval', logs({ follow_interval: '2 s' }), 'logs.follow_interval', /invalid duration/),
  c('logs.line_count', logs({ line_count: 0 }), 'logs.line_count'),
  c('logs.start_at', logs({ start_at: 'middle' }), 'logs.start_at', /end|beginning/),
  c('logs.log_types', logs({ log_types: [] }), 'logs.log_types', /at least one log type/),
  c('logs.log_types', logs({ log_types: 'access' }), 'logs.log_types'),
  c('logs.time_zone', logs({ time_zone: 'Mars/Olympus_Mons' }), 'logs.time_zone', /unknown time zone/),
  c('logs.server_filter', logs({ server_filter: 'noDebug' }), 'logs.server_filter', /object/),
  c('logs.server_filter.flags', logs({ server_filter: { flags: ['noTrace'] } }), 'logs.server_filter.flags[0]'),
  c('logs.server_filter.search', logs({ server_filter: { search: '' } }), 'logs.server_filter.search'),
  c('logs.server_filter.regex_search', logs({ server_filter: { search: 'a', regex_search: 'b' } }), 'logs.server_filter.regex_search', /not both/),
  c('logs.filters', logs({ filters: [] }), 'logs.filters', /object/),
  c('logs.filters.min_severity', logs({ filters: { min_severity: 'loud' } }), 'logs.filters.min_severity'),
  c('logs.filters.categories', logs({ filters: { categories: 'stream' } }), 'logs.filters.categories', /object/),
  c('logs.filters.categories.include', logs({ filters: { categories: { include: 'stream' } } }), 'logs.filters.categories.include', /array/),
  c('logs.filters.categories.exclude', logs({ filters: { categories: { exclude: [''] } } }), 'logs.filters.categories.exclude[0]'),
  c('logs.filters.events', logs({ filters: { events: ['play'] } }), 'logs.filters.events', /object/),
  c('logs.filters.events.include', logs({ filters: { events: { include: [3] } } }), 'logs.filters.events.include[0]', /string/),
  c('logs.filters.events.exclude', logs({ filters: { events: { exclude: {} } } }), 'logs.filters.events.exclude', /array/),
  c('logs.filters.applications', logs({ filters: { applications: true } }), 'logs.filters.applications', /object/),
  c('logs.filters.applications.include', logs({ filters: { applications: { include: 'live' } } }), 'logs.filters.applications.include', /array/),
  c('logs.filters.applications.exclude', logs({ filters: { applications: { exclude: [''] } } }), 'logs.filters.applications.exclude[0]'),
  c('logs.filters.field_regex', logs({ filters: { field_regex: ['x-app'] } }), 'logs.filters.field_regex'),
  c('logs.filters.field_regex.<key>', logs({ filters: { field_regex: { 'x-app': '([' } } }), 'logs.filters.field_regex.x-app', /regular expression/),
  c('logs.filters.exclude_field_regex', logs({ filters: { exclude_field_regex: 'x' } }), 'logs.filters.exclude_field_regex'),
  c('logs.filters.exclude_field_regex.<key>', logs({ filters: { exclude_field_regex: { 'c-ip': '+' } } }), 'logs.filters.exclude_field_regex.c-ip', /regular expression/),
  c('logs.redact_secrets', logs({ redact_secrets: 'yes' }), 'logs.redact_secrets', /boolean/),
  c('logs.sinks', logs({ sinks: [] }), 'logs.sinks', /at least one sink/),
  c('logs.sinks', logs({ sinks: { type: 'stdout' } }), 'logs.sinks', /array/),
  c('logs.sinks[stdout].type', sink({ type: 'kafka' }), 'logs.sinks[0]', /unknown sink type/),
  c('logs.sinks[stdout].name', sink({ type: 'stdout', name: 'my sink!' }), 'logs.sinks[0].name'),
  c('logs.sinks[stdout].name', logs({ sinks: [{ type: 'stdout' }, { type: 'stdout' }] }), 'logs.sinks[1].name', /already used/),
  c('logs.sinks[file].type', sink({ type: 'File', path: '/tmp/x' }), 'logs.sinks[0]', /unknown sink type/),
  c('logs.sinks[file].name', fileSink({ name: '' }), 'logs.sinks[0].name'),
  c('logs.sinks[file].path', sink({ type: 'file' }), 'logs.sinks[0].path'),
  c('logs.sinks[file].path', fileSink({ path: A_DIRECTORY }), 'logs.sinks[0].path', /is a directory/),
  c('logs.sinks[file].max_bytes', fileSink({ max_bytes: '0' }), 'logs.sinks[0].max_bytes', /invalid size/),
  c('logs.sinks[file].max_files', fileSink({ max_files: 1000 }), 'logs.sinks[0].max_files'),
  c('logs.sinks[loki].type', sink({ type: 'grafana', url: 'http://127.0.0.1:3100' }), 'logs.sinks[0]', /unknown sink type/),
  c('logs.sinks[loki].name', loki({ name: 'a'.repeat(65) }), 'logs.sinks[0].name'),
  c('logs.sinks[loki].url', loki({ url: 'loki:3100' }), 'logs.sinks[0].url'),
  c('logs.sinks[loki].url', loki({ url: 'http://user:pw@loki:3100' }), 'logs.sinks[0].url', /credentials/),
  c('logs.sinks[loki].tenant_id', loki({ tenant_id: '' }), 'logs.sinks[0].tenant_id'),
  c('logs.sinks[loki].username', loki({ password_file: secret('loki-password') }), 'logs.sinks[0].username', /needs username/),
  c('logs.sinks[loki].username', loki({ username: 'u', bearer_token_file: secret('loki-token'), password_file: secret('loki-password') }), 'logs.sinks[0].bearer_token_file', /not both/),
  c('logs.sinks[loki].password_file', loki({ username: 'u' }), 'logs.sinks[0].password_file', /username needs password_file/),
  c('logs.sinks[loki].password_file', loki({ username: 'u', password_file: MISSING }), 'logs.sinks[0].password_file', /cannot read .*ENOENT/),
  c('logs.sinks[loki].bearer_token_file', loki({ bearer_token_file: MISSING }), 'logs.sinks[0].bearer_token_file', /cannot read .*ENOENT/),
  c('logs.sinks[loki].labels', loki({ labels: ['env=prod'] }), 'logs.sinks[0].labels'),
  c('logs.sinks[loki].labels.<key>', loki({ labels: { '1env': 'prod' } }), 'logs.sinks[0].labels', /label names/),
  c('logs.sinks[loki].labels.<key>', loki({ labels: { server: 'mine' } }), 'logs.sinks[0].labels.server', /cannot be overridden/),
  c('logs.sinks[loki].labels.<key>', loki({ labels: { env: 3 } }), 'logs.sinks[0].labels.env', /string/),
  c('logs.sinks[loki].timeout', loki({ timeout: 'forever' }), 'logs.sinks[0].timeout', /invalid duration/),
  c('logs.sinks[loki].labels.<key>', loki({ labels: { service_name: 'x' } }), 'logs.sinks[0].labels.service_name', /set it with service_name/),
  c('logs.sinks[loki].service_name', loki({ service_name: '' }), 'logs.sinks[0].service_name'),
  c('logs.sinks[loki].compression', loki({ compression: 'zstd' }), 'logs.sinks[0].compression', /gzip|none/),
  c('logs.sinks[loki].structured_metadata', loki({ structured_metadata: 'c-ip' }), 'logs.sinks[0].structured_metadata', /array/),
  c('logs.sinks[loki].tls', loki({ tls: 'yes' }), 'logs.sinks[0].tls', /object/),
  c('logs.sinks[loki].tls.ca_file', loki({ tls: { ca_file: MISSING } }), 'logs.sinks[0].tls.ca_file', /cannot read .*ENOENT/),
  c('logs.sinks[loki].tls.insecure_skip_verify', loki({ tls: { insecure_skip_verify: 'no' } }), 'logs.sinks[0].tls.insecure_skip_verify', /boolean/),
  c('logs.sinks[http].type', sink({ type: 'https', url: 'http://127.0.0.1:9000' }), 'logs.sinks[0]', /unknown sink type/),
  c('logs.sinks[http].name', httpSink({ name: 'a b' }), 'logs.sinks[0].name'),
  c('logs.sinks[http].url', sink({ type: 'http' }), 'logs.sinks[0].url'),
  c('logs.sinks[http].headers', httpSink({ headers: ['X-Token: 1'] }), 'logs.sinks[0].headers'),
  c('logs.sinks[http].headers.<key>', httpSink({ headers: { 'X Token': '1' } }), 'logs.sinks[0].headers', /header name/),
  c('logs.sinks[http].headers.<key>', httpSink({ headers: { 'X-Token': 1 } }), 'logs.sinks[0].headers.X-Token', /string/),
  c('logs.sinks[http].bearer_token_file', httpSink({ bearer_token_file: MISSING }), 'logs.sinks[0].bearer_token_file', /cannot read .*ENOENT/),
  c('logs.sinks[http].bearer_token_file', httpSink({ headers: { Authorization: 'Bearer x' }, bearer_token_file: secret('http-token') }), 'logs.sinks[0].bearer_token_file', /drop one/),
  c('logs.sinks[http].timeout', httpSink({ timeout: '1 minute' }), 'logs.sinks[0].timeout', /invalid duration/),
  c('logs.sinks[http].tls', httpSink({ tls: [] }), 'logs.sinks[0].tls', /object/),
  c('logs.sinks[http].tls.ca_file', httpSink({ tls: { ca_file: MISSING } }), 'logs.sinks[0].tls.ca_file', /cannot read .*ENOENT/),
  c('logs.sinks[http].tls.insecure_skip_verify', httpSink({ tls: { insecure_skip_verify: 0 } }), 'logs.sinks[0].tls.insecure_skip_verify', /boolean/),
  c('logs.batch', logs({ batch: 1000 }), 'logs.batch', /object/),
  c('logs.batch.max_lines', logs({ batch: { max_lines: 0 } }), 'logs.batch.max_lines'),
  c('logs.batch.max_bytes', logs({ batch: { max_bytes: 'lots' } }), 'logs.batch.max_bytes', /invalid size/),
  c('logs.batch.max_wait', logs({ batch: { max_wait: '1 s' } }), 'logs.batch.max_wait', /invalid duration/),
  c('logs.retry', logs({ retry: 3 }), 'logs.retry', /object/),
  c('logs.retry.min_backoff', logs({ retry: { min_backoff: 'x' } }), 'logs.retry.min_backoff', /invalid duration/),
  c('logs.retry.min_backoff', logs({ retry: { min_backoff: '1m', max_backoff: '1s' } }), 'logs.retry.min_backoff', /must not exceed max_backoff/),
  c('logs.retry.max_backoff', logs({ retry: { max_backoff: 'x' } }), 'logs.retry.max_backoff', /invalid duration/),
  c('logs.retry.max_retries', logs({ retry: { max_retries: -1 } }), 'logs.retry.max_retries'),
  c('logs.queue_lines', logs({ queue_lines: 0 }), 'logs.queue_lines'),
  c('logs.max_queue_bytes', logs({ max_queue_bytes: 'plenty' }), 'logs.max_queue_bytes', /invalid size/),
  c('logs.parse_threads', logs({ parse_threads: 17 }), 'logs.parse_threads'),
  c('logs.dead_letter_file', logs({ dead_letter_file: '' }), 'logs.dead_letter_file'),
  c('logs.dead_letter_file', logs({ dead_letter_file: A_DIRECTORY }), 'logs.dead_letter_file', /is a directory/),
  c('logs.drain_timeout', logs({ drain_timeout: 'a while' }), 'logs.drain_timeout', /invalid duration/),

  c('webhooks', { webhooks: true }, 'webhooks', /object/),
  c('webhooks.enabled', { webhooks: { enabled: 'yes' } }, 'webhooks.enabled', /boolean/),
  c('webhooks.path', { webhooks: { path: 'webhooks' } }, 'webhooks.path', /must start with \//),
  c('webhooks.secret_file', { webhooks: { enabled: true, secret_file: MISSING } }, 'webhooks.secret_file', /cannot read .*ENOENT/),
  c('webhooks.secret_file', { webhooks: { enabled: true } }, 'webhooks.secret_file', /needs a secret .*insecure_allow_unauthenticated: true/),
  c('webhooks.auth', { webhooks: { auth: 'hmac' } }, 'webhooks.auth', /jwt|token/),
  c('webhooks.max_token_lifetime', { webhooks: { max_token_lifetime: 'forever' } }, 'webhooks.max_token_lifetime', /invalid duration/),
  c('webhooks.insecure_allow_unauthenticated', { webhooks: { insecure_allow_unauthenticated: 'yes' } }, 'webhooks.insecure_allow_unauthenticated', /boolean/),
  c('webhooks.clock_skew', { webhooks: { clock_skew: 'some' } }, 'webhooks.clock_skew', /invalid duration/),
  c('webhooks.dedupe_window', { webhooks: { dedupe_window: 0 } }, 'webhooks.dedupe_window'),

  c('log', { log: 'debug' }, 'log', /object/),
  c('log.level', { log: { level: 'loud' } }, 'log.level', /debug|info|warn|error/),
  c('log.format', { log: { format: 'xml' } }, 'log.format', /json|logfmt/),
  c('log.probe_level', { log: { probe_level: 'chatty' } }, 'log.probe_level', /debug|info|warn|error/),
];

function emptyFile(name: string): string {
  const p = join(dir, name);
  writeFileSync(p, '');
  chmodSync(p, 0o600);
  return p;
}

function tokenWithSpaces(): string {
  const p = join(dir, 'token-with-spaces');
  writeFileSync(p, 'Bearer eyJ.abc.def\n');
  chmodSync(p, 0o600);
  return p;
}

/**
 * What `serve` reads before it answers anything: the config (with its secret files), the web config,
 * and the sinks (which read their own secret and CA files). The ConfigError message, or undefined.
 */
async function configErrorOf(doc: Doc): Promise<string | undefined> {
  const path = join(dir, 'case.yaml');
  writeFileSync(path, stringify(doc));
  try {
    const runtime = loadConfig({ config: path }, {});
    if (runtime.config.web.config_file) await loadWebConfig(runtime.config.web.config_file);
    if (runtime.config.logs) for (const s of createSinks(runtime.config.logs.sinks)) await s.close();
    return undefined;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

/** The problem lines of a message (`invalid config x.yaml:` is a heading, not a problem). */
const problems = (message: string) =>
  message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^invalid config .*:$/.test(l));

describe('every config key set wrong', () => {
  it('has a case for every key of the schema', () => {
    const covered = new Set(CASES.map((x) => x.key));
    expect(schemaKeys(ConfigSchema).filter((k) => !covered.has(k))).toEqual([]);
    expect(CASES.map((x) => x.key).filter((k) => !schemaKeys(ConfigSchema).includes(k))).toEqual([]);
  });

  it.each(CASES.map((x) => [x.names, JSON.stringify(x.doc).replaceAll(dir, '<tmp>'), x] as const))('%s: %s', async (_name, _doc, x) => {
    const message = await configErrorOf(x.doc);
    expect(message, 'accepted, expected a ConfigError').toBeDefined();
    const lines = problems(message!);
    expect(lines.length, message).toBeGreaterThan(0);
    // Every problem reported is about this key, so the message points at it and nothing else.
    for (const line of lines) expect(line.startsWith(`${x.names}:`) || line.startsWith(`${x.names}.`) || line.startsWith(`${x.names}[`) || line.startsWith(`--${x.names}:`), message).toBe(true);
    if (x.says) expect(message).toMatch(x.says);
  });

  it('accepts the base documents the cases start from', async () => {
    for (const doc of [server({}), module({}), logs({}), loki({}), fileSink({}), httpSink({}), { web: { listen_address: '127.0.0.1:0' } }]) {
      expect(await configErrorOf(doc), JSON.stringify(doc)).toBeUndefined();
    }
  });
});
