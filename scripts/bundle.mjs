#!/usr/bin/env node
/**
 * Bundles the CLI (`npm run build`, after tsc): `dist/cli.js`, the file `npx wowza-exporter` runs, becomes one
 * small entry plus shared chunks in `dist/chunks/`, with the libraries inside. A process then loads a few dozen
 * files instead of about 300 modules, and keeps each one's source text once, in one-byte form: about 4 MB less
 * resident memory for a small server (issue 27, bench/RESULTS.md "Footprint"). Commands and features a
 * configuration does not use stay in chunks of their own, loaded when used, as the dynamic imports in the source
 * say. tsc's per-module output stays in `dist/` for the tests and benchmarks that import single modules.
 *
 * The simulator (`simulate`, `demo`) is the workspace package packages/simulator: bundled from its built output
 * (packages/simulator/dist, which `npm run build` makes first) into a chunk of its own, so the tarball needs no
 * workspace package.
 *
 * Left to Node at run time, as before: yargs (src/base/yargs-lean.ts builds it from its own files) and the YAML parser
 * (src/config/yaml.ts). `dist/chunks/modules.json` lists the source modules in each chunk, for the test that
 * checks what `serve` loads.
 */
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';
import { rolldown } from 'rolldown';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
const chunks = `${dist}/chunks`;

/**
 * Modules of the libraries that load Node built-ins at start for features the exporter never uses, replaced in the
 * bundle by a stand-in that throws if it is ever called. Each built-in loaded is resident code and source for the
 * life of the process (issue 27); test/e2e/serve-footprint.test.ts checks that a metrics-only `serve` loads none of
 * them, and the tests that run tsc's output still run the libraries whole.
 */
const LEFT_OUT = [
  {
    // undici's Client requires its HTTP/2 client at load, and with it node:http2 and node:tls. The exporter's
    // agents never set `allowH2` (src/wowza/transport.ts, src/logs/sinks/http-post.ts), so undici never
    // negotiates HTTP/2 and never calls it.
    importer: '/undici/lib/dispatcher/client.js',
    source: './client-h2.js',
    stub: "module.exports = function connectH2() {\n  throw new Error('undici negotiated HTTP/2, which this build of wowza-exporter leaves out (scripts/bundle.mjs)');\n};",
  },
];
/**
 * Modules the libraries require only on a path the exporter does not take, left in node_modules and required from
 * there if that path is ever taken: V8 keeps the source of every bundled chunk in memory, used or not (issue 27).
 * undici's fallback parser for machines without WebAssembly SIMD (72 KB of base64), and the fetch body code its
 * HTTP/1 client requires for a FormData body (with WebIDL and MIME parsing, 150 KB). test/unit/undici-core.test.ts
 * checks that they resolve from the chunks.
 */
const LOAD_LATER = [
  { importer: '/undici/lib/dispatcher/client-h1.js', source: '../llhttp/llhttp-wasm.js', external: 'undici/lib/llhttp/llhttp-wasm.js' },
  { importer: '/undici/lib/dispatcher/client-h1.js', source: '../web/fetch/body.js', external: 'undici/lib/web/fetch/body.js' },
];
const STAND_IN = '\0left-out:';
const leftOut = new Set();
const leaveOut = {
  name: 'leave-out',
  resolveId(source, importer) {
    const from = importer?.replaceAll('\\', '/');
    const later = LOAD_LATER.findIndex((m) => m.source === source && from?.endsWith(m.importer));
    if (later >= 0) {
      leftOut.add(`later:${later}`);
      return { id: LOAD_LATER[later].external, external: true };
    }
    const i = LEFT_OUT.findIndex((m) => m.source === source && from?.endsWith(m.importer));
    if (i < 0) return null;
    leftOut.add(i);
    return `${STAND_IN}${i}`;
  },
  load(id) {
    if (!id.startsWith(STAND_IN)) return null;
    return `'use strict';\n${LEFT_OUT[Number(id.slice(STAND_IN.length))].stub}\n`;
  },
};

rmSync(chunks, { recursive: true, force: true });
const bundle = await rolldown({
  input: {
    cli: `${root}src/cli.ts`,
    // Started by src/logs/transform/encoder-pool.ts as `./encode-worker.js` beside its own chunk.
    'encode-worker': `${root}src/logs/transform/encode-worker.ts`,
    // Started by src/wowza/answer-parser.ts as `./answer-worker.js` beside its own chunk.
    'answer-worker': `${root}src/wowza/answer-worker.ts`,
    // Started by src/config/target-file-thread.ts as `./target-file-worker.js` beside its own chunk.
    'target-file-worker': `${root}src/config/target-file-worker.ts`,
    // Started by src/logs/acks/atomic-file-thread.ts as `./atomic-file-worker.js` beside its own chunk.
    'atomic-file-worker': `${root}src/logs/acks/atomic-file-worker.ts`,
  },
  platform: 'node',
  plugins: [leaveOut],
  cwd: root,
  tsconfig: `${root}tsconfig.build.json`,
});
const { output } = await bundle.write({
  dir: dist,
  format: 'esm',
  entryFileNames: (chunk) => (chunk.name === 'cli' ? 'cli.js' : 'chunks/[name].js'),
  // A chunk holding one workspace package only (the simulator) is named after it, not after its dist/ folder.
  chunkFileNames: (chunk) => {
    const packages = new Set(chunk.moduleIds.map((id) => /\/packages\/([^/]+)\//.exec(id.replaceAll('\\', '/'))?.[1]));
    const [only] = packages;
    return packages.size === 1 && only ? `chunks/${only}-[hash].js` : 'chunks/[name]-[hash].js';
  },
  // V8 keeps every module's source; one non-Latin-1 character stores a whole chunk in two bytes a character.
  charset: 'ascii',
  // Licence notices stay; other comments are text the process would hold for nothing.
  comments: { legal: true, annotation: false, jsdoc: false },
  sourcemap: true,
});
await bundle.close();
// A library that moved the module would otherwise bring it back without a word.
for (const [i, m] of LEFT_OUT.entries()) {
  if (!leftOut.has(i)) throw new Error(`bundle: ${m.importer} no longer requires ${m.source}; update LEFT_OUT in scripts/bundle.mjs`);
}
for (const [i, m] of LOAD_LATER.entries()) {
  if (!leftOut.has(`later:${i}`)) throw new Error(`bundle: ${m.importer} no longer requires ${m.source}; update LOAD_LATER in scripts/bundle.mjs`);
}

const modules = {};
for (const item of output) {
  if (item.type !== 'chunk') continue;
  modules[item.fileName] = item.moduleIds.filter((id) => !id.startsWith('\0')).map((id) => relative(root, id));
}
writeFileSync(`${chunks}/modules.json`, `${JSON.stringify(modules, null, 1)}\n`);
// src/base/build-info.ts reads build-info.json beside its own module, which now lives in a chunk.
if (existsSync(`${dist}/base/build-info.json`)) copyFileSync(`${dist}/base/build-info.json`, `${chunks}/build-info.json`);
console.log(`bundled ${Object.keys(modules).length} files into dist/cli.js and dist/chunks/`);
