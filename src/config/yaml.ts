import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');
let yaml: YamlModule | undefined;

/**
 * `yaml`'s `parse`, loaded the first time a file is read: `serve` configured by flags alone never reads YAML and
 * does not keep the parser (about 1 MB) in memory (issue 27). Loading is synchronous (the package's CommonJS
 * build) because the configuration is read synchronously.
 */
export function parseYaml(text: string): unknown {
  yaml ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return yaml.parse(text);
}
