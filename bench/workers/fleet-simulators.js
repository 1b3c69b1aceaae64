import { startSimulator } from '@wowza-exporter/simulator';

/**
 * The simulators of bench/fleet.js, in a process of their own: `node fleet-simulators.js <servers> <streams> <password>`,
 * each on 127.2.x.y:8087 (one application of <streams> streams, no transcoder renditions). Prints "ready" once every one listens.
 */
const [servers, streams, password] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
for (let i = 0; i < servers; i++) {
  const host = `127.2.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;
  await startSimulator({ host, port: 8087, adminPort: 0, auth: 'basic', password, frozen: true, apps: 1, streams, renditions: [], logRate: 0 });
}
console.log('ready');
setInterval(() => {}, 1 << 30);
