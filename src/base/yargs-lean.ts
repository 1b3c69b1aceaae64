import { notStrictEqual, strictEqual } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import type { Argv } from 'yargs';

/**
 * yargs, built by its own factory with a platform shim whose help renderer (cliui, string-width and their
 * emoji-regex and Unicode tables) is loaded the first time help is rendered instead of at import. Those modules
 * cost `serve` about 5 MB of resident memory for text it never prints (issue 27, bench/RESULTS.md). The shim
 * is yargs' own `lib/platform-shims/esm.mjs` with the two renderer entries made lazy; yargs 18 does not export
 * its factory, so it is found beside yargs' entry point, as src/base/undici-core.ts finds undici's Agent, and
 * test/unit/yargs-lean.test.ts fails if a new yargs moves it. Renderer modules are ESM, loaded with Node's
 * synchronous `require(esm)` (Node 20.19 and later) because yargs renders help synchronously.
 */
type YargsFactoryFn = (shim: unknown) => (argv: string[]) => Argv;

const yargsEntry = fileURLToPath(import.meta.resolve('yargs'));
const yargsDir = dirname(yargsEntry);
/** Resolves yargs' own dependencies from where yargs is, not from where this file is. */
const requireFromYargs = createRequire(yargsEntry);

function lazy<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}
const defaultExport = <T>(mod: T | { default: T }): T => ((mod as { default?: T }).default ?? mod) as T;
const cliui = lazy(() => defaultExport(requireFromYargs('cliui') as (opts: unknown) => unknown));
const stringWidth = lazy(() => defaultExport(requireFromYargs('string-width') as (s: string) => number));

function platformShim(getProcessArgvBin: () => string) {
  const y18n = defaultExport(requireFromYargs('y18n') as (opts: unknown) => unknown);
  const getCallerFile = defaultExport(requireFromYargs('get-caller-file') as (position?: number) => string);
  // As yargs' shim computes it from its own path: the directory that holds node_modules.
  const mainFilename = yargsEntry.substring(0, yargsEntry.lastIndexOf('node_modules'));
  return {
    assert: { notStrictEqual, strictEqual },
    cliui: (opts: unknown) => cliui()(opts),
    findUp: defaultExport(requireFromYargs('escalade/sync') as unknown),
    getEnv: (key: string) => process.env[key],
    inspect,
    getProcessArgvBin,
    mainFilename: mainFilename || process.cwd(),
    Parser: defaultExport(requireFromYargs('yargs-parser') as unknown),
    path: { basename, dirname, extname, relative, resolve, join },
    process: {
      argv: () => process.argv,
      cwd: process.cwd,
      emitWarning: (warning: string, type: string) => process.emitWarning(warning, type),
      execPath: () => process.execPath,
      exit: (code: number) => process.exit(code),
      nextTick: process.nextTick,
      stdColumns: typeof process.stdout.columns !== 'undefined' ? process.stdout.columns : null,
    },
    readFileSync,
    readdirSync,
    require: requireFromYargs,
    getCallerFile: () => {
      const callerFile = getCallerFile(3);
      return callerFile.startsWith('file://') ? fileURLToPath(callerFile) : callerFile;
    },
    stringWidth: (s: string) => stringWidth()(s),
    y18n: y18n({ directory: join(yargsDir, 'locales'), updateFiles: false }),
  };
}

interface UsageInternals {
  getInternalMethods(): { getUsageInstance(): { cacheHelpMessage(): void } };
}

/**
 * The `yargs()` function, as `import yargs from 'yargs'` gives it, except for one thing: before it runs a named
 * command (`serve`), yargs renders that command's help and keeps it, to show if the command fails later. This CLI's
 * fail handler never shows help (it says "Run with --help"), so that text, and the renderer it would load, is
 * skipped; `--help` renders as before.
 */
export async function loadYargs(): Promise<(argv: string[]) => Argv> {
  const [{ YargsFactory }, { getProcessArgvBin }] = (await Promise.all([
    import(new URL('build/lib/yargs-factory.js', import.meta.resolve('yargs')).href),
    import(new URL('build/lib/utils/process-argv.js', import.meta.resolve('yargs')).href),
  ])) as [{ YargsFactory: YargsFactoryFn }, { getProcessArgvBin: () => string }];
  const yargs = YargsFactory(platformShim(getProcessArgvBin));
  return (argv) => {
    const cli = yargs(argv);
    (cli as unknown as UsageInternals).getInternalMethods().getUsageInstance().cacheHelpMessage = () => {};
    return cli;
  };
}
