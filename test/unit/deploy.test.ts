import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { RULES_FILE, missingTool, promtoolPath } from '../helpers/prometheus.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const yamlFile = <T>(path: string) => parse(read(path)) as T;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed YAML, checked field by field

// ---------------------------------------------------------------------------------------------------

describe('deploy/prometheus/prometheus.yml', () => {
  const config = yamlFile<Obj>('deploy/prometheus/prometheus.yml');
  const jobs = new Map<string, Obj>(config.scrape_configs.map((j: Obj) => [j.job_name, j]));

  it('loads the rules file', () => {
    expect(config.rule_files.map((f: string) => resolve(DEPLOY, 'prometheus', f))).toEqual([RULES_FILE]);
  });

  it('names its jobs so that the rules (job=~".*wowza.*") select them', () => {
    for (const name of jobs.keys()) expect(name).toMatch(/wowza/);
  });

  it('scrapes /metrics of the exporter on :9935', () => {
    expect(jobs.get('wowza')!.static_configs[0].targets).toEqual(['wowza-exporter:9935']);
  });

  it('uses the multi-target pattern for /probe: target and module as parameters, instance = target, address = exporter', () => {
    const probe = jobs.get('wowza-probe')!;
    expect(probe.metrics_path).toBe('/probe');
    const relabel: Obj[] = probe.relabel_configs;
    const writes = (label: string) => relabel.find((r) => r.target_label === label);
    expect(writes('__param_target')).toMatchObject({ source_labels: ['__address__'] });
    expect(writes('__param_module')).toMatchObject({ source_labels: ['module'] });
    expect(writes('instance')).toMatchObject({ source_labels: ['__param_target'] });
    expect(writes('__address__')).toMatchObject({ replacement: 'wowza-exporter:9935' });
    // Order matters: the target is copied before the address is overwritten.
    expect(relabel.indexOf(writes('__param_target')!)).toBeLessThan(relabel.indexOf(writes('__address__')!));
    for (const group of probe.static_configs) {
      expect(group.labels.module).toMatch(/\w/);
      for (const t of group.targets) expect(t).toMatch(/^https?:\/\//);
    }
  });

  it.skipIf(missingTool('promtool', promtoolPath(), 'promtool check config'))('passes promtool check config', () => {
    const out = execFileSync(promtoolPath()!, ['check', 'config', join(DEPLOY, 'prometheus/prometheus.yml')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out).toContain('is valid prometheus config file syntax');
  });
});

// ---------------------------------------------------------------------------------------------------

describe('deploy/kubernetes', () => {
  const dir = join(DEPLOY, 'kubernetes');
  const manifests = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
  const resources: Obj[] = manifests.flatMap((f) =>
    parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((doc) => {
      expect(doc.errors, f).toEqual([]);
      return doc.toJS() as Obj;
    }),
  );
  const byKind = (kind: string) => {
    const found = resources.filter((r) => r.kind === kind);
    expect(found, kind).toHaveLength(1);
    return found[0]!;
  };
  const deployment = byKind('Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];

  it('lists every manifest in the kustomization', () => {
    const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Obj;
    expect([...kustomization.resources].sort()).toEqual([...manifests].sort());
    expect(kustomization.images[0].name).toBe(container.image);
  });

  it('runs as non-root with a read-only root filesystem and no privileges', () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, privileged: false, capabilities: { drop: ['ALL'] } });
  });

  it('probes /-/healthy for liveness and /-/ready for readiness on the metrics port', () => {
    expect(container.ports).toEqual([{ name: 'http-metrics', containerPort: 9935, protocol: 'TCP' }]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/-/healthy', port: 'http-metrics' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/-/healthy', port: 'http-metrics' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/-/ready', port: 'http-metrics' });
  });

  it('sets resource requests and a memory limit, with the Node heap below it', () => {
    expect(container.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources.limits.memory).toMatch(/^\d+Mi$/);
    const heapMb = Number(/--max-old-space-size=(\d+)/.exec(container.env.find((e: Obj) => e.name === 'NODE_OPTIONS').value)![1]);
    expect(heapMb).toBeLessThan(parseInt(container.resources.limits.memory, 10));
  });

  it('runs one replica, never two side by side', () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
  });

  it('serves with the ConfigMap config and reads the password from the mounted Secret', () => {
    expect(container.args).toEqual(['serve', '--config', '/etc/wowza-exporter/config.yaml']);
    const mounts = new Map<string, Obj>(container.volumeMounts.map((m: Obj) => [m.name, m]));
    const volumes = new Map<string, Obj>(pod.volumes.map((v: Obj) => [v.name, v]));
    expect(mounts.get('config')).toMatchObject({ mountPath: '/etc/wowza-exporter/config.yaml', subPath: 'config.yaml', readOnly: true });
    expect(volumes.get('config')!.configMap.name).toBe(byKind('ConfigMap').metadata.name);
    expect(mounts.get('credentials')).toMatchObject({ mountPath: '/etc/wowza-exporter/secrets', readOnly: true });
    expect(volumes.get('credentials')!.secret).toMatchObject({ secretName: 'wowza-exporter-credentials', items: [{ key: 'password', path: 'password' }] });
    // The only writable place is the working directory of the image (positions, dead letters).
    expect(mounts.get('state')!.mountPath).toBe('/var/lib/wowza-exporter');

    const config = parseConfig(parse(byKind('ConfigMap').data['config.yaml']) as Record<string, unknown>);
    expect(config.servers!.map((s) => s.password_file)).toEqual(['/etc/wowza-exporter/secrets/password']);
    expect(config.web.listen_address).toBe(':9935');
  });

  it('exposes the pod through the Service and the ServiceMonitor', () => {
    const service = byKind('Service');
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
    expect(service.spec.ports).toEqual([{ name: 'http-metrics', port: 9935, targetPort: 'http-metrics', protocol: 'TCP' }]);
    const monitor = byKind('ServiceMonitor');
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'http-metrics', path: '/metrics' })]);
    // The job label of a ServiceMonitor scrape is the Service name: the rules select job=~".*wowza.*".
    expect(service.metadata.name).toMatch(/wowza/);
  });

  it('ships the same rules as deploy/prometheus/rules/wowza.rules.yml in the PrometheusRule', () => {
    const rule = byKind('PrometheusRule');
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.spec.groups).toEqual((parse(readFileSync(RULES_FILE, 'utf8')) as Obj).groups);
    const res = spawnSync(process.execPath, [join(dir, 'generate-prometheusrule.mjs'), '--check'], { encoding: 'utf8' });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------

describe('deploy/docker-compose.yml', () => {
  // Compose files use YAML merge keys (`<<: *anchor`).
  const compose = parse(read('deploy/docker-compose.yml'), { merge: true }) as Obj;
  const services: Obj = compose.services;
  const exporterConfigPath = join(DEPLOY, 'compose/exporter.yaml');
  const exporterConfig = parseConfig(parse(readFileSync(exporterConfigPath, 'utf8')) as Record<string, unknown>);
  const prometheusConfig = yamlFile<Obj>('deploy/prometheus/prometheus.yml');

  it('runs simulators, the exporter, Prometheus, Loki and Grafana', () => {
    expect(Object.keys(services).sort()).toEqual(['grafana', 'loki', 'prometheus', 'wowza-exporter', 'wowza-sim-1', 'wowza-sim-2']);
    for (const sim of ['wowza-sim-1', 'wowza-sim-2']) {
      expect(services[sim].command.slice(0, 3), sim).toEqual(['simulate', '--host', '0.0.0.0']);
      expect(services[sim].build.dockerfile).toBe('Dockerfile');
    }
    expect(services['wowza-exporter'].command).toEqual(['serve', '--config', '/etc/wowza-exporter/config.yaml']);
  });

  it('mounts only files that exist, and publishes ports on loopback only', () => {
    for (const [name, svc] of Object.entries(services) as Array<[string, Obj]>) {
      for (const v of (svc.volumes ?? []) as string[]) {
        const source = v.split(':')[0]!;
        if (source.startsWith('.')) expect(existsSync(resolve(DEPLOY, source)), `${name}: ${v}`).toBe(true);
      }
      for (const p of (svc.ports ?? []) as string[]) expect(p, name).toMatch(/^127\.0\.0\.1:/);
    }
    for (const s of Object.values(compose.secrets) as Obj[]) expect(existsSync(resolve(DEPLOY, s.file))).toBe(true);
    expect(existsSync(resolve(DEPLOY, services['wowza-exporter'].build.context, 'Dockerfile'))).toBe(true);
  });

  it('gives the exporter a valid config: sim-1 in servers:, sim-2 allowed for /probe, logs to Loki', () => {
    const mount = (services['wowza-exporter'].volumes as string[]).find((v) => v.endsWith(':/etc/wowza-exporter/config.yaml:ro'))!;
    expect(resolve(DEPLOY, mount.split(':')[0]!)).toBe(exporterConfigPath);
    expect(exporterConfig.servers!.map((s) => new URL(s.url).hostname)).toEqual(['wowza-sim-1']);
    const secretPaths = Object.keys(compose.secrets).map((name) => `/run/secrets/${name}`);
    for (const s of [...exporterConfig.servers!, ...Object.values(exporterConfig.modules)]) expect(secretPaths).toContain(s.password_file);
    // Every /probe target of prometheus.yml must pass the module's allow-list, or the probe answers 400.
    const probe = prometheusConfig.scrape_configs.find((j: Obj) => j.job_name === 'wowza-probe');
    for (const group of probe.static_configs) {
      const allowed = exporterConfig.modules[group.labels.module]!.allowed_targets.map((re) => new RegExp(`^(?:${re})$`));
      for (const target of group.targets) expect(allowed.some((re) => re.test(new URL(target).origin)), target).toBe(true);
    }
    const loki = exporterConfig.logs!.sinks.find((s) => s.type === 'loki')!;
    expect(new URL((loki as { url: string }).url).hostname).toBe('loki');
    // Under the read-only root filesystem only the state volume is writable.
    expect(exporterConfig.logs!.positions_file.startsWith('/var/lib/wowza-exporter/')).toBe(true);
    expect(exporterConfig.logs!.dead_letter_file.startsWith('/var/lib/wowza-exporter/')).toBe(true);
    expect(services['wowza-exporter'].volumes).toContain('exporter-state:/var/lib/wowza-exporter');
  });

  it('points Prometheus at the exporter service and mounts the rules where prometheus.yml expects them', () => {
    const exporterPort = String(exporterConfig.web.listen_address).split(':').pop();
    expect(prometheusConfig.scrape_configs[0].static_configs[0].targets).toEqual([`wowza-exporter:${exporterPort}`]);
    const volumes = services.prometheus.volumes as string[];
    expect(volumes).toContain('./prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(volumes).toContain('./prometheus/rules:/etc/prometheus/rules:ro');
  });

  it('provisions the Prometheus and Loki datasources and the dashboards folder in Grafana', () => {
    const volumes = services.grafana.volumes as string[];
    expect(volumes).toContain('./grafana/provisioning:/etc/grafana/provisioning:ro');
    const dashboardsMount = volumes.find((v) => v.startsWith('../dashboards:'))!.split(':')[1];
    const datasources = yamlFile<Obj>('deploy/grafana/provisioning/datasources/wowza.yml').datasources as Obj[];
    expect(datasources.map((d) => [d.type, new URL(d.url).hostname])).toEqual([
      ['prometheus', 'prometheus'],
      ['loki', 'loki'],
    ]);
    const providers = yamlFile<Obj>('deploy/grafana/provisioning/dashboards/wowza.yml').providers as Obj[];
    expect(providers.map((p) => p.options.path)).toEqual([dashboardsMount]);
  });
});

// ---------------------------------------------------------------------------------------------------

describe('deploy/systemd/wowza-exporter.service', () => {
  const unitPath = join(DEPLOY, 'systemd/wowza-exporter.service');
  const text = readFileSync(unitPath, 'utf8');
  /** `Key=value` lines by key (a key may repeat). */
  const settings = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) settings.set(m[1]!, [...(settings.get(m[1]!) ?? []), m[2]!]);
  }
  const one = (key: string) => settings.get(key)?.[0];

  it('serves with the config file and is hardened', () => {
    expect(one('ExecStart')).toMatch(/ \/opt\/wowza-exporter\/dist\/cli\.js serve --config \/etc\/wowza-exporter\/config\.yaml$/);
    expect(one('DynamicUser')).toBe('yes');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('NoNewPrivileges')).toBe('yes');
    expect(one('ProtectHome')).toBe('yes');
    expect(one('PrivateTmp')).toBe('yes');
    expect(one('CapabilityBoundingSet')).toBe('');
    expect(one('SystemCallFilter')).toBe('@system-service');
    // The V8 JIT needs writable and executable memory: this option would kill node at start.
    expect(settings.has('MemoryDenyWriteExecute')).toBe(false);
  });

  it('keeps state in StateDirectory, hands the password over with LoadCredential and does not restart on config errors', () => {
    expect(one('StateDirectory')).toBe('wowza-exporter');
    expect(one('WorkingDirectory')).toBe('/var/lib/wowza-exporter');
    expect(one('LoadCredential')).toBe('password:/etc/wowza-exporter/secrets/password');
    expect(text).toContain('password_file: /run/credentials/wowza-exporter.service/password');
    expect(one('RestartPreventExitStatus')).toBe('2');
  });

  const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
  if (!analyze) console.warn('\n!!! SKIPPED: systemd-analyze checks of the unit — systemd-analyze not found !!!\n');

  describe.skipIf(!analyze)('systemd-analyze', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wowza-unit-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    // verify checks that the binary exists: point ExecStart at this machine's node.
    const copy = join(dir, 'wowza-exporter.service');
    writeFileSync(copy, text.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));

    it('verify finds nothing wrong', () => {
      const res = spawnSync(analyze!, ['verify', copy], { encoding: 'utf8' });
      expect(`${res.stdout}${res.stderr}`.trim()).toBe('');
      expect(res.status).toBe(0);
    });

    it('security rates the exposure OK (below 2.0)', () => {
      const res = spawnSync(analyze!, ['security', '--offline=true', '--no-pager', copy], { encoding: 'utf8' });
      const score = /Overall exposure level for .*: ([\d.]+)/.exec(res.stdout)?.[1];
      expect(score, res.stdout + res.stderr).toBeDefined();
      expect(Number(score)).toBeLessThan(2);
    });
  });
});

describe('deploy/systemd socket activation', () => {
  const service = readFileSync(join(DEPLOY, 'systemd/wowza-exporter.service'), 'utf8');
  const socket = readFileSync(join(DEPLOY, 'systemd/wowza-exporter.socket'), 'utf8');
  const dropIn = readFileSync(join(DEPLOY, 'systemd/socket-activation.conf'), 'utf8');
  const values = (text: string, key: string) => [...text.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!);

  it('listens where the exporter would (:9935), one socket for the whole service', () => {
    expect(values(socket, 'ListenStream')).toEqual(['9935']);
    expect(values(socket, 'Accept')).toEqual(['no']);
  });

  it('the drop-in runs the unit\'s own command with --web.systemd-socket, after clearing it', () => {
    const [clear, start] = values(dropIn, 'ExecStart');
    expect(clear).toBe('');
    expect(start).toBe(`${values(service, 'ExecStart')[0]} --web.systemd-socket`);
    expect(values(dropIn, 'Requires')).toEqual(['wowza-exporter.socket']);
  });

  const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
  it.skipIf(!analyze)('systemd-analyze verify finds nothing wrong with the socket and its service', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wowza-socket-'));
    try {
      writeFileSync(join(dir, 'wowza-exporter.service'), service.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));
      writeFileSync(join(dir, 'wowza-exporter.socket'), socket);
      const res = spawnSync(analyze!, ['verify', join(dir, 'wowza-exporter.socket')], { encoding: 'utf8' });
      expect(`${res.stdout}${res.stderr}`.trim()).toBe('');
      expect(res.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------------

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions (continuation lines joined, comments dropped), grouped by stage. */
function dockerStages(text: string): Instruction[][] {
  const stages: Instruction[][] = [];
  const logical = text.replace(/\\\n/g, ' ').split('\n');
  for (const line of logical) {
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m || line.trim().startsWith('#')) continue;
    const ins = { op: m[1]!.toUpperCase(), args: m[2]!.trim() };
    if (ins.op === 'FROM') stages.push([]);
    stages.at(-1)?.push(ins);
  }
  return stages;
}

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  const stages = dockerStages(text);
  const runtime = stages.at(-1)!;
  const find = (stage: Instruction[], op: string) => stage.filter((i) => i.op === op);
  const dockerignore = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

  it('builds in one stage, installs production dependencies in another and runs on the Node.js major the tests run on', () => {
    // The suite runs on the Node of the machine (.ci/run: Debian's); the image ships the same major.
    const tested = process.versions.node.split('.')[0];
    expect(text).toMatch(/^ARG NODE_IMAGE=node:(\d+)-bookworm-slim$/m);
    expect(text.match(/^ARG NODE_IMAGE=node:(\d+)-/m)![1], `the Dockerfile's Node.js major is not the tested ${tested}`).toBe(tested);
    expect(stages.length).toBe(3);
    for (const s of stages) expect(s[0]!.args).toMatch(/^\$\{NODE_IMAGE\}/);
    const build = stages[0]!.map((i) => i.args).join('\n');
    expect(build).toMatch(/npm ci\b/);
    expect(build).toMatch(/npm run build/);
    expect(stages[1]!.map((i) => i.args).join('\n')).toMatch(/npm ci --omit=dev/);
    // The runtime stage takes build output only: no npm install, no sources, no dev dependencies.
    expect(find(runtime, 'RUN').map((i) => i.args).join('\n')).not.toMatch(/npm (ci|install)/);
    expect(find(runtime, 'COPY').map((i) => i.args)).toEqual(['--from=deps /src/node_modules ./node_modules', '--from=build /src/dist ./dist', 'package.json ./']);
  });

  it('runs as a numeric non-root user with the documented entrypoint, command and port', () => {
    const user = find(runtime, 'USER').at(-1)!.args;
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
    expect(JSON.parse(find(runtime, 'ENTRYPOINT')[0]!.args)).toEqual(['node', '/app/dist/cli.js']);
    expect(JSON.parse(find(runtime, 'CMD')[0]!.args)).toEqual(['serve']);
    expect(find(runtime, 'EXPOSE').map((i) => i.args)).toEqual(['9935']);
  });

  it('carries OCI labels', () => {
    const labels = find(runtime, 'LABEL').map((i) => i.args).join(' ');
    for (const key of ['title', 'description', 'licenses', 'version', 'revision', 'created']) expect(labels).toContain(`org.opencontainers.image.${key}=`);
  });

  it('copies only what exists and .dockerignore lets through', () => {
    for (const stage of stages) {
      for (const copy of find(stage, 'COPY').filter((i) => !i.args.startsWith('--from'))) {
        const sources = copy.args.split(/\s+/).slice(0, -1);
        for (const src of sources) {
          expect(existsSync(join(ROOT, src)), src).toBe(true);
          expect(dockerignore, src).not.toContain(src.replace(/\/$/, ''));
        }
      }
    }
    for (const heavy of ['node_modules', 'dist', '.git']) expect(dockerignore).toContain(heavy);
  });

  describe('HEALTHCHECK', () => {
    const healthcheck = find(runtime, 'HEALTHCHECK')[0]!.args;
    const cmd = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD') + 3).trim()) as string[];
    let server: Server;
    afterAll(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

    it('asks /-/healthy with node (no curl in the slim image) on the default port', () => {
      expect(cmd.slice(0, 2)).toEqual(['node', '-e']);
      expect(cmd[2]).toContain('http://127.0.0.1:9935/-/healthy');
    });

    it('exits 0 for a healthy exporter and 1 for an unhealthy or absent one', async () => {
      let status = 200;
      const paths: string[] = [];
      server = createServer((req, res) => {
        paths.push(req.url ?? '');
        res.writeHead(status).end();
      });
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      const port = (server.address() as { port: number }).port;
      const script = cmd[2]!.replace(':9935/', `:${port}/`);
      // Asynchronously: the server answering lives in this process.
      const run = () =>
        new Promise<number | null>((done) => {
          const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore', timeout: 10_000 });
          child.on('close', (code) => done(code));
        });
      expect(await run()).toBe(0);
      status = 503;
      expect(await run()).toBe(1);
      expect(paths).toEqual(['/-/healthy', '/-/healthy']);
      await new Promise<void>((done) => server.close(() => done()));
      expect(await run()).toBe(1);
    });
  });
});

// ---------------------------------------------------------------------------------------------------

describe('runtime memory settings (two malloc arenas; the young generation is the CLI\'s own)', () => {
  /** `A=b C=d` (Dockerfile ENV, systemd Environment=) as pairs. */
  const pairs = (s: string) => Object.fromEntries(s.trim().split(/\s+/).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const image = Object.assign({}, ...dockerStages(read('Dockerfile')).at(-1)!.filter((i) => i.op === 'ENV').map((i) => pairs(i.args))) as Record<string, string>;
  const expected = { MALLOC_ARENA_MAX: '2' };

  it('are the image defaults, which no longer need a NODE_OPTIONS', () => {
    expect(image).toMatchObject(expected);
    expect(image.NODE_OPTIONS).toBeUndefined();
  });

  it('are set by the systemd unit', () => {
    const unit = read('deploy/systemd/wowza-exporter.service');
    const env = Object.assign({}, ...[...unit.matchAll(/^Environment=(.*)$/gm)].map((m) => pairs(m[1]!))) as Record<string, string>;
    expect(env).toMatchObject(expected);
  });

  it('are kept by the Kubernetes Deployment', () => {
    const deployment = parseAllDocuments(read('deploy/kubernetes/deployment.yaml')).map((d) => d.toJS() as Obj).find((r) => r.kind === 'Deployment')!;
    const env = new Map<string, string>(deployment.spec.template.spec.containers[0].env.map((e: Obj) => [e.name, e.value]));
    expect(env.get('MALLOC_ARENA_MAX')).toBe(expected.MALLOC_ARENA_MAX);
  });

  it('are what the benchmark measures as the tuned row', () => {
    const row = /label: 'MALLOC_ARENA_MAX=2', env: \{ MALLOC_ARENA_MAX: '([^']*)' \}/.exec(read('bench/run.js'));
    expect(row, 'the tuned row of bench/run.js').not.toBeNull();
    expect({ MALLOC_ARENA_MAX: row![1] }).toEqual(expected);
  });
});
