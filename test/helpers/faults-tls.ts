import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SelfSignedCert {
  /** PEM files, for NODE_EXTRA_CA_CERTS or a ca_file. */
  certPath: string;
  keyPath: string;
  /** PEM contents, for the simulator's `tls` option. */
  cert: Buffer;
  key: Buffer;
}

/** Path of `openssl` on PATH, or undefined. */
export function opensslPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const path = join(dir, 'openssl');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** For `it.skipIf`: true, with a warning naming what is left out, when openssl is not installed. */
export function missingOpenssl(what: string): boolean {
  if (opensslPath() !== undefined) return false;
  console.warn(`SKIPPED ${what}: openssl is not installed (apt-get install openssl)`);
  return true;
}

/**
 * A fresh self-signed certificate for 127.0.0.1 (P-256, valid two days) in `dir`. Each call makes a new
 * key, so two certificates never trust each other.
 */
export async function selfSignedCert(dir: string, name: string): Promise<SelfSignedCert> {
  const openssl = opensslPath();
  if (!openssl) throw new Error('openssl is not installed');
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  await run(openssl, [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', `/CN=wowza-exporter fault suite ${name}`, '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', keyPath, '-out', certPath,
  ]);
  return { certPath, keyPath, cert: readFileSync(certPath), key: readFileSync(keyPath) };
}
