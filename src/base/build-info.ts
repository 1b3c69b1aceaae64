import { readFileSync } from 'node:fs';

function readJson(url: URL): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(url, 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : 'unknown');
// Written next to the compiled code by scripts/write-build-info.mjs (`npm run build`), and beside the bundle's
// chunks by scripts/bundle.mjs; package.json is the fallback when running from the sources.
const built = readJson(new URL('./build-info.json', import.meta.url));
const pkg = built.version === undefined ? readJson(new URL('../../package.json', import.meta.url)) : {};

/**
 * Version (package.json's, as the build saw it), revision, branch, date and user of the build from build-info.json.
 * The environment's WOWZA_EXPORTER_REVISION (set in the Docker image, built without .git) wins for the revision.
 */
export const BUILD = {
  version: text(built.version ?? pkg.version),
  revision: process.env.WOWZA_EXPORTER_REVISION || text(built.revision),
  branch: text(built.branch),
  buildUser: text(built.buildUser),
  buildDate: text(built.buildDate),
};

/** `--version`, laid out as Prometheus components print theirs. */
export function versionText(): string {
  return [
    `wowza-exporter, version ${BUILD.version} (branch: ${BUILD.branch}, revision: ${BUILD.revision})`,
    `  build user:       ${BUILD.buildUser}`,
    `  build date:       ${BUILD.buildDate}`,
    `  node version:     ${process.version}`,
    `  platform:         ${process.platform}/${process.arch}`,
  ].join('\n');
}
