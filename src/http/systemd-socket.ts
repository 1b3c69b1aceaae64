import { ConfigError } from '../config/errors.js';

/** The first descriptor systemd passes (sd_listen_fds(3): SD_LISTEN_FDS_START). */
const FIRST_FD = 3;

/**
 * The listening sockets systemd passed to this process (socket activation, sd_listen_fds(3)): descriptors 3 to
 * 3 + LISTEN_FDS - 1, when LISTEN_PID names this process. The variables are removed afterwards, as
 * sd_listen_fds(unset_environment=1) does, so that no child takes the sockets for its own. Throws saying what is
 * missing: `--web.systemd-socket` without sockets is a configuration error, not a reason to listen elsewhere.
 */
export function systemdSockets(env: NodeJS.ProcessEnv = process.env, pid = process.pid): number[] {
  const fds = env.LISTEN_FDS;
  const forPid = env.LISTEN_PID;
  if (fds === undefined || forPid === undefined) {
    throw new ConfigError('--web.systemd-socket: systemd passed no sockets (LISTEN_FDS and LISTEN_PID are not set); start the exporter from a .socket unit (deploy/systemd/wowza-exporter.socket), or leave the flag out');
  }
  if (!/^\d+$/.test(forPid) || Number(forPid) !== pid) {
    throw new ConfigError(`--web.systemd-socket: the sockets are for process ${forPid}, not this one (${pid}); a wrapper between systemd and the exporter must exec it`);
  }
  const count = /^\d+$/.test(fds) ? Number(fds) : NaN;
  if (!(count >= 1 && count <= 64)) throw new ConfigError(`--web.systemd-socket: LISTEN_FDS is "${fds}", not a number of sockets from 1 to 64`);
  delete env.LISTEN_FDS;
  delete env.LISTEN_PID;
  delete env.LISTEN_FDNAMES;
  return Array.from({ length: count }, (_, i) => FIRST_FD + i);
}
