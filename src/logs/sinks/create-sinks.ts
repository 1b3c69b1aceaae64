import { ConfigError } from '../../config/errors.js';
import { readSecretFile } from '../../config/secrets.js';
import type { LogSinkConfig } from '../../config/logs.js';
import { FileSink } from './file.js';
import { HttpSink } from './http.js';
import type { SinkTls } from './http-post.js';
import type { LogSink } from './sink.js';
import { LokiSink } from './loki.js';
import { StdoutSink } from './stdout.js';

export interface CreateSinksOptions {
  /** Where `stdout` sinks write; standard output (file descriptor 1) by default. */
  stdout?: NodeJS.WritableStream;
  /** Warnings about secret files (e.g. readable by everyone). */
  warn?: (msg: string, meta: object) => void;
}

function tlsOf(tls: { ca_file?: string; insecure_skip_verify: boolean } | undefined): SinkTls {
  return { ...(tls?.ca_file ? { caFile: tls.ca_file } : {}), insecureSkipVerify: tls?.insecure_skip_verify ?? false };
}

/**
 * Builds the configured sinks. Secrets are read from their files here, once; a missing or empty file
 * is a ConfigError naming the field (never its content).
 */
export function createSinks(configs: readonly LogSinkConfig[], options: CreateSinksOptions = {}): LogSink[] {
  const sinks: LogSink[] = [];
  try {
    configs.forEach((c, i) => {
      try {
        sinks.push(createSink(c, `logs.sinks[${i}]`, options));
      } catch (err) {
        if (err instanceof ConfigError) throw err;
        throw new ConfigError(`logs.sinks[${i}].${(err as Error).message}`);
      }
    });
  } catch (err) {
    // Sinks built before the failure hold connection pools: release them.
    for (const s of sinks) void s.close().catch(() => undefined);
    throw err;
  }
  return sinks;
}

function createSink(c: LogSinkConfig, path: string, options: CreateSinksOptions): LogSink {
  const secret = (file: string, f: string) => readSecretFile(file, `${path}.${f}`, options.warn);
  switch (c.type) {
    case 'stdout':
      return new StdoutSink(c.name, options.stdout);
    case 'file':
      return new FileSink(c.name, { path: c.path, maxBytes: c.max_bytes, maxFiles: c.max_files });
    case 'loki':
      return new LokiSink({
        name: c.name,
        url: c.url,
        timeoutMs: c.timeout,
        tls: tlsOf(c.tls),
        labels: c.labels,
        serviceName: c.service_name,
        compression: c.compression,
        structuredMetadata: c.structured_metadata,
        ...(c.tenant_id ? { tenantId: c.tenant_id } : {}),
        ...(c.username && c.password_file ? { basicAuth: { username: c.username, password: secret(c.password_file, 'password_file') } } : {}),
        ...(c.bearer_token_file ? { bearerToken: secret(c.bearer_token_file, 'bearer_token_file') } : {}),
      });
    case 'http':
      return new HttpSink({
        name: c.name,
        url: c.url,
        timeoutMs: c.timeout,
        tls: tlsOf(c.tls),
        headers: c.headers,
        ...(c.bearer_token_file ? { bearerToken: secret(c.bearer_token_file, 'bearer_token_file') } : {}),
      });
  }
}
