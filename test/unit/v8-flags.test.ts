import { describe, expect, it } from 'vitest';
import { footprintFlags, optimiseJavaScript, runsServe, userSizesYoungGeneration } from '../../src/base/v8-flags.js';
import { commandsToLoad } from '../../src/cli-main.js';

describe('V8 settings for serve (v8-flags.ts)', () => {
  it('sets Liftoff-only WebAssembly, a later TurboFan (held off until there is work), a 1.6x old generation and no baseline compiler', () => {
    expect(footprintFlags([], undefined)).toEqual(['--liftoff-only', '--interrupt-budget=1000000', '--heap-growing-percent=60', '--no-sparkplug', '--no-turbofan']);
    expect(footprintFlags([], '--enable-source-maps')).toHaveLength(5);
  });

  it('leaves to the user what the user set, in NODE_OPTIONS or on node\'s command line, in either spelling', () => {
    expect(footprintFlags(['--no-liftoff-only'], undefined)).not.toContain('--liftoff-only');
    expect(footprintFlags(['--heap_growing_percent=20', '--interrupt-budget=200000', '--sparkplug', '--opt'], undefined)).toEqual(['--liftoff-only']);
    for (const own of ['--turbofan', '--no-opt', '--max-opt=2', '--jitless']) expect(footprintFlags([own], undefined)).not.toContain('--no-turbofan');
    expect(userSizesYoungGeneration([], '--max-semi-space-size=8')).toBe(true);
    expect(userSizesYoungGeneration(['--max_semi_space_size=8'], undefined)).toBe(true);
    expect(userSizesYoungGeneration(['--semi-space-growth-factor=3'], undefined)).toBe(true);
    expect(userSizesYoungGeneration([], '--max-old-space-size=512')).toBe(false);
  });

  it('turns TurboFan on only where serve held it off (not in a process that never applied the flags)', () => {
    expect(optimiseJavaScript()).toBe(false);
  });

  it('applies to serve, the default command, and not to help, --version or the other commands', () => {
    expect(runsServe([])).toBe(true);
    expect(runsServe(['serve', '--config', 'x.yaml'])).toBe(true);
    expect(runsServe(['--config', 'x.yaml'])).toBe(true);
    expect(runsServe(['serve', '--help'])).toBe(false);
    expect(runsServe(['--version'])).toBe(false);
    expect(runsServe(['logs', 'tail'])).toBe(false);
    expect(runsServe(['simulate'])).toBe(false);
  });
});

describe('commands the CLI loads (cli-main.ts)', () => {
  it('loads the command named, serve for a line of options, and everything for help', () => {
    expect(commandsToLoad(['simulate', '--port', '0'])).toEqual(['simulate']);
    expect(commandsToLoad(['--wowza.url', 'http://wse:8087'])).toEqual(['serve']);
    expect(commandsToLoad([])).toEqual(['serve']);
    expect(commandsToLoad(['--log.level', 'debug', 'demo'])).toEqual(['serve', 'demo']);
    expect(commandsToLoad(['--help'])).toHaveLength(7);
    expect(commandsToLoad(['simulate', '--help'])).toHaveLength(7);
    expect(commandsToLoad(['sirve'])).toHaveLength(7);
  });
});
