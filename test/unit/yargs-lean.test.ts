import { describe, expect, it } from 'vitest';
import { loadYargs } from '../../src/base/yargs-lean.js';

describe('yargs without its help renderer until help is rendered (yargs-lean.ts)', () => {
  it('finds yargs\' factory beside its entry point (fails if a new yargs moves it)', async () => {
    expect(typeof (await loadYargs())).toBe('function');
  });

  it('parses as yargs does', async () => {
    const yargs = await loadYargs();
    const argv = await yargs(['--web.listen-address', ':9', '--n', '3', 'extra']).parserConfiguration({ 'dot-notation': false }).option('n', { type: 'number' }).parseAsync();
    expect(argv['web.listen-address']).toBe(':9');
    expect(argv.n).toBe(3);
    expect(argv._).toEqual(['extra']);
  });

  it('renders help, loading the renderer then', async () => {
    const yargs = await loadYargs();
    const help = await yargs([]).scriptName('x').option('poll.interval', { type: 'string', describe: 'how often to poll' }).wrap(80).getHelp();
    expect(help).toMatch(/--poll\.interval\s+how often to poll\s+\[string\]/);
  });
});
