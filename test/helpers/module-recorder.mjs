/**
 * Preloaded with `NODE_OPTIONS=--import <this file>` into an exporter under test: records every module it loads
 * into the file named by LOADED_MODULES_FILE, one URL or path per line. ES modules (and CommonJS ones imported
 * from them) through a loader hook; CommonJS modules `require()`d by others are added from require.cache on
 * SIGUSR2, after which the file is complete up to that moment. Node's built-in modules loaded so far are listed
 * then too, as `builtin:<id>` (process.moduleLoadList).
 */
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const file = process.env.LOADED_MODULES_FILE;
if (file) {
  register(new URL('./module-recorder-hooks.mjs', import.meta.url), { data: { file } });
  const require = createRequire(import.meta.url);
  process.on('SIGUSR2', () => {
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => `builtin:${m.slice('NativeModule '.length)}\n`);
    appendFileSync(file, Object.keys(require.cache).map((p) => `${p}\n`).join('') + builtins.join('') + '# complete\n');
  });
}
