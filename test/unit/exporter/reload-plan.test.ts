import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { wseCollectorsEnabled } from '../../../src/collectors/registry.js';
import { loadConfig, type RuntimeConfig } from '../../../src/config/load.js';
import { planReload } from '../../../src/exporter/reload-plan.js';

const dir = mkdtempSync(join(tmpdir(), 'reload-plan-'));
let n = 0;
function runtimeOf(yaml: string, env: NodeJS.ProcessEnv = {}): RuntimeConfig {
  const path = join(dir, `config-${n++}.yaml`);
  writeFileSync(path, yaml, { mode: 0o600 });
  return loadConfig({ config: path }, env);
}
const enabled = (rt: RuntimeConfig) => wseCollectorsEnabled(rt.collectors).map((c) => c.name);
const plan = (before: string, after: string, env: { before?: NodeJS.ProcessEnv; after?: NodeJS.ProcessEnv } = {}) => planReload(runtimeOf(before, env.before), runtimeOf(after, env.after), enabled);

const BASE = 'servers:\n  - url: http://a.example:8087\n';

describe('reload plan', () => {
  it('changes nothing for the same configuration', () => {
    expect(plan(BASE, BASE)).toEqual({ restartNeeded: [], repollAll: false, collectorsGone: [], restartVideo: false, restartLogs: false, restartServersFiles: false });
  });

  it('a server list change is left to the server set: nothing restarts', () => {
    expect(plan(BASE, `${BASE}  - url: http://b.example:8087\n`)).toMatchObject({ repollAll: false, restartLogs: false, restartVideo: false, restartServersFiles: false });
  });

  it('poll settings poll every server anew, and name the collectors turned off', () => {
    const p = plan(BASE, `${BASE}collectors:\n  recorder: false\n  stream_target: false\n`);
    expect(p.repollAll).toBe(true);
    expect(p.collectorsGone.sort()).toEqual(['recorder', 'stream_target']);
    expect(plan(BASE, `${BASE}poll:\n  interval: 30s\n`)).toMatchObject({ repollAll: true, collectorsGone: [] });
  });

  it('web and webhook settings are for the next restart, and say so', () => {
    expect(plan(BASE, `${BASE}web:\n  listen_address: ":9999"\n`).restartNeeded).toEqual(['web']);
    const webhooks = `${BASE}webhooks:\n  enabled: true\n  insecure_allow_unauthenticated: true\n`;
    expect(plan(BASE, webhooks).restartNeeded).toEqual(['webhooks']);
  });

  it('the log level is applied, nothing restarts for it', () => {
    expect(plan(BASE, `${BASE}log:\n  level: debug\n`)).toMatchObject({ logLevel: 'debug', repollAll: false, restartLogs: false });
  });

  it('log settings restart log shipping only', () => {
    const logs = `${BASE}logs:\n  sinks:\n    - type: stdout\n`;
    expect(plan(BASE, logs)).toMatchObject({ restartLogs: true, repollAll: false });
    expect(plan(logs, logs.replace('stdout', 'stdout\n      name: out'))).toMatchObject({ restartLogs: true, repollAll: false });
  });

  it('a new Video token replaces the Video job alone; turning Video on polls anew', () => {
    const video = (file: string, token: string) => {
      writeFileSync(join(dir, file), token, { mode: 0o600 });
      return `${BASE}video:\n  token_file: ${join(dir, file)}\n`;
    };
    const before = runtimeOf(video('token-1', 'abc'));
    const after = runtimeOf(video('token-2', 'def'));
    expect(planReload(before, after, enabled)).toMatchObject({ restartVideo: true, repollAll: false, restartLogs: false });
    // The collector set itself changed: the whole schedule is made anew, the Video job with it.
    expect(planReload(runtimeOf(BASE), after, enabled)).toMatchObject({ repollAll: true, restartVideo: false });
  });

  it('target file settings read the files anew', () => {
    expect(plan(BASE, `${BASE}servers_files: ["${dir}/*.targets.yaml"]\n`)).toMatchObject({ restartServersFiles: true, repollAll: false });
  });
});
