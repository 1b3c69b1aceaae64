import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Finding `promtool`, `prometheus`, `chromium` and `kubectl` for the tests that need them. Without them those tests
 * skip, and say so loudly; with REQUIRE_PROMETHEUS=1 (REQUIRE_CHROMIUM=1 for the browser, REQUIRE_KUBECTL=1 for
 * kustomize; CI installs all four and sets all three) a missing binary fails the test file instead.
 */

/** True when the environment demands the real Prometheus tools (CI sets REQUIRE_PROMETHEUS=1). */
export const requirePrometheus = process.env.REQUIRE_PROMETHEUS === '1';
const requireChromium = process.env.REQUIRE_CHROMIUM === '1';
const requireKubectl = process.env.REQUIRE_KUBECTL === '1';

/** The alerting and recording rules; the dashboards need the recording rules loaded. */
export const RULES_FILE = fileURLToPath(new URL('../../deploy/prometheus/rules/wowza.rules.yml', import.meta.url));

/** The promtool unit tests of the rules. */
export const RULE_TESTS_DIR = fileURLToPath(new URL('../../deploy/prometheus/tests/', import.meta.url));

function findExecutable(name: string, envOverride: string): string | undefined {
  const candidates = process.env[envOverride] ? [process.env[envOverride]] : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name));
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Path of `promtool` (env PROMTOOL, else PATH), or undefined when it is not installed. */
export function promtoolPath(): string | undefined {
  return findExecutable('promtool', 'PROMTOOL');
}

/** Path of Debian's `chromium` (env CHROMIUM, else PATH), the real browser of the status page test; never downloaded. */
export function chromiumPath(): string | undefined {
  return findExecutable('chromium', 'CHROMIUM');
}

/** Path of Debian's `kubectl` (env KUBECTL, else PATH), for `kubectl kustomize` of the deploy material. */
export function kubectlPath(): string | undefined {
  return findExecutable('kubectl', 'KUBECTL');
}

/** Path of `prometheus` (env PROMETHEUS, else PATH), or undefined when it is not installed. */
export function prometheusPath(): string | undefined {
  return findExecutable('prometheus', 'PROMETHEUS');
}

/**
 * Decides whether tests needing `tool` must skip, for `describe.skipIf(missingTool(...))`: false when the
 * tool is there; true, with a loud warning, when it is missing; and when REQUIRE_PROMETHEUS=1 a missing
 * tool throws, which fails the test file.
 */
export function missingTool(tool: 'promtool' | 'prometheus' | 'chromium' | 'kubectl', path: string | undefined, what: string): boolean {
  if (path !== undefined) return false;
  const pkg = tool === 'promtool' ? 'prometheus' : tool;
  const hint = `install it (apt-get install ${pkg}) or set ${tool.toUpperCase()}=/path/to/${tool}`;
  const flag = tool === 'chromium' ? 'CHROMIUM' : tool === 'kubectl' ? 'KUBECTL' : 'PROMETHEUS';
  const required = tool === 'chromium' ? requireChromium : tool === 'kubectl' ? requireKubectl : requirePrometheus;
  if (required) throw new Error(`${tool} is required (REQUIRE_${flag}=1) for ${what} but was not found: ${hint}`);
  console.warn(`\n!!! SKIPPED: ${what} — ${tool} not found; ${hint} !!!\n`);
  return true;
}
