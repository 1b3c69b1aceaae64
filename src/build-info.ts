import { readFileSync } from 'node:fs';

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Version from package.json; revision from the build environment (set in the Docker image), else `unknown`. */
export const BUILD = {
  version: packageVersion(),
  revision: process.env.WOWZA_EXPORTER_REVISION ?? 'unknown',
};
