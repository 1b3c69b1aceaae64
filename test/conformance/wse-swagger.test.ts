import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { answerFor, ENDPOINT_NAMES, loadSwaggerModels, type Endpoint, type SwaggerModels } from '../helpers/swagger-models.js';
import { problems } from './shape.js';
import { swaggerShape } from './swagger-shape.js';

/**
 * Conformance to the server's own models: every endpoint of MODELS.md the exporter reads answers, on the
 * simulator, with the fields of the WSE 4.9.0 Swagger model and their types, nested items included, and no
 * field the model lacks. Where wse-reference.ts (the markdown reference, transcribed) and these models
 * disagree, the models win: they are what the server itself says it sends.
 */


const S = '/v2/servers/_defaultServer_';
const V = `${S}/vhosts/_defaultVHost_`;
const A = (app: string) => `${V}/applications/${app}`;
const I = (app: string) => `${A(app)}/instances/_definst_`;
const ACCESS = 'wowzastreamingengine_access';

/**
 * Requests of each endpoint, and the lists that must not be empty in the answer (an empty list conforms to
 * anything: the items would go unchecked). The default layout with a fourth application: `live` (transcoder,
 * DVR, a recording stream), `cameras` (appType null), `vod` (not running), `app4` (stream targets).
 */
const EXAMPLES: Record<Endpoint, Array<{ path: string; nonEmpty?: (body: Body) => unknown[] }>> = {
  machineCurrent: [{ path: '/v2/machine/monitoring/current' }],
  serverStatus: [{ path: `${S}/status`, nonEmpty: (b) => [b.transcoderApplications, b.dvrApplications] }],
  vhosts: [{ path: `${S}/vhosts`, nonEmpty: (b) => [b.vhosts] }],
  vhostCurrent: [{ path: `${V}/monitoring/current` }],
  applications: [{ path: `${V}/applications`, nonEmpty: (b) => [b.applications] }],
  applicationCurrent: [{ path: `${A('live')}/monitoring/current` }, { path: `${A('vod')}/monitoring/current` }],
  instances: [
    { path: `${A('live')}/instances`, nonEmpty: (b) => [b.instanceList, b.instanceList?.[0]?.incomingStreams, b.instanceList?.[0]?.recorders] },
    { path: `${A('cameras')}/instances`, nonEmpty: (b) => [b.instanceList] },
  ],
  streamCurrent: [
    { path: `${I('live')}/incomingstreams/stream1/monitoring/current` },
    { path: `${I('live')}/incomingstreams/stream1_160p/monitoring/current` },
    // A stream the application does not have: 200 with zeros, in the same shape.
    { path: `${I('live')}/incomingstreams/gone/monitoring/current` },
  ],
  streamRecorders: [{ path: `${I('live')}/streamrecorders`, nonEmpty: (b) => [b.streamrecorder] }, { path: `${I('vod')}/streamrecorders` }],
  pushPublishMapEntries: [{ path: `${A('app4')}/pushpublish/mapentries`, nonEmpty: (b) => [b.mapEntries] }, { path: `${A('live')}/pushpublish/mapentries` }],
  logTypes: [{ path: `${S}/logs`, nonEmpty: (b) => [b.serverLogType] }],
  logFiles: [{ path: `${S}/logfiles?order=newestFirst`, nonEmpty: (b) => [b.serverLogFiles] }],
  logCurrent: [{ path: `${S}/logs/${ACCESS}?lineCount=5`, nonEmpty: (b) => [b.logLines] }],
  logFile: [{ path: `${S}/logfiles/${ACCESS}.log?lineCount=5`, nonEmpty: (b) => [b.logLines] }],
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked by shape, not typed
type Body = any;

let sim: Simulator;
let models: SwaggerModels;

async function get(path: string): Promise<{ status: number; contentType: string; json: Body }> {
  const authorization = `Basic ${Buffer.from(`${sim.username}:${sim.password}`).toString('base64')}`;
  const res = await fetch(sim.url + path, { headers: { accept: 'application/json', authorization } });
  const text = await res.text();
  let json: Body;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', json };
}

describe("the simulator against WSE 4.9.0's own models (wse-swagger-4.9.0)", () => {
  beforeAll(async () => {
    models = loadSwaggerModels();
    sim = await startSimulator({ auth: 'basic', frozen: true, apps: 4 });
  });
  afterAll(() => sim?.close());

  for (const endpoint of ENDPOINT_NAMES) {
    for (const example of EXAMPLES[endpoint]) {
      it(`${endpoint}: GET ${example.path} has the fields and types of the model, and no other field`, async () => {
        const res = await get(example.path);
        expect(res.status).toBe(200);
        expect(res.contentType).toMatch(/^application\/json/);
        expect(problems(res.json, swaggerShape(models.response(endpoint)))).toEqual([]);
        for (const list of example.nonEmpty?.(res.json) ?? []) expect(list, 'a list whose items must be checked').not.toHaveLength(0);
      });
    }
  }

  it('{I} answers one InstanceConfig, the model of the instance list items', async () => {
    const item = models.response('instances').fields.instanceList;
    if (item?.kind !== 'array' || item.items.kind !== 'object') throw new Error('InstancesConfig.instanceList is not a list of objects');
    const res = await get(I('live'));
    expect(problems(res.json, swaggerShape(item.items))).toEqual([]);
  });

  it('the status lists name the applications configured with the feature, consistent with the application list', async () => {
    const status = (await get(`${S}/status`)).json;
    const apps = (await get(`${V}/applications`)).json.applications as Array<{ id: string; dvrEnabled: boolean; drmEnabled: boolean; transcoderEnabled: boolean }>;
    expect(status.transcoderApplications).toEqual(apps.filter((a) => a.transcoderEnabled).map((a) => a.id));
    expect(status.dvrApplications).toEqual(apps.filter((a) => a.dvrEnabled).map((a) => a.id));
    expect(status.drmApplications).toEqual(apps.filter((a) => a.drmEnabled).map((a) => a.id));
    expect(status.dvrInUse).toBe(true);
    expect(status.drmInUse).toBe(false);
    for (const made of ['dvrEnabled', 'drmEnabled', 'transcoderEnabled']) expect(status).not.toHaveProperty(made);
  });
});

describe('the answers made from the models (test/helpers/swagger-models.ts)', () => {
  const vars = { vhostName: '_defaultVHost_', appName: 'live', instanceName: '_definst_', streamName: 'cam1', logType: ACCESS, logName: `${ACCESS}.log` };
  const numbers = (v: unknown): number[] =>
    typeof v === 'number' ? [v] : Array.isArray(v) ? v.flatMap(numbers) : v && typeof v === 'object' ? Object.values(v).flatMap(numbers) : [];

  for (const endpoint of ENDPOINT_NAMES) {
    it(`${endpoint}: both modes conform to the model; extreme numbers are all MIN_SAFE_INTEGER, realistic ones never negative`, () => {
      const m = loadSwaggerModels();
      const shape = swaggerShape(m.response(endpoint));
      const extreme = answerFor(endpoint, 'extreme', vars, m);
      const realistic = answerFor(endpoint, 'realistic', vars, m);
      expect(problems(extreme, shape)).toEqual([]);
      expect(problems(realistic, shape)).toEqual([]);
      expect(numbers(extreme).filter((n) => n !== Number.MIN_SAFE_INTEGER)).toEqual([]);
      expect(numbers(realistic).filter((n) => n < 0 || !Number.isFinite(n))).toEqual([]);
    });
  }

  it('names that walk the tree are valid in both modes; unknown objects are undefined (404)', () => {
    for (const mode of ['extreme', 'realistic'] as const) {
      expect(answerFor('vhosts', mode)!.vhosts).toMatchObject([{ id: '_defaultVHost_' }]);
      expect(answerFor('applications', mode, vars)!.applications).toMatchObject([{ id: 'live' }]);
      expect(answerFor('instances', mode, vars)!.instanceList).toMatchObject([{ name: '_definst_', incomingStreams: [{ name: 'cam1' }] }]);
      expect(answerFor('streamCurrent', mode, vars)).toMatchObject({ name: 'cam1' });
      expect(answerFor('applicationCurrent', mode, { ...vars, appName: 'nope' })).toBeUndefined();
      expect(answerFor('serverStatus', mode, { serverName: 'other' })).toBeUndefined();
    }
    expect(answerFor('vhostCurrent', 'extreme', vars)!.connectionCount).toEqual(expect.objectContaining({ RTMP: Number.MIN_SAFE_INTEGER, CUPERTINO: Number.MIN_SAFE_INTEGER }));
  });
});
