import { M } from '../metrics/definitions.js';
import { labelValueTooLong } from '../metrics/label-bounds.js';
import type { MetricSet } from '../metrics/metric-set.js';
import { scrubReceived } from '../base/secret-scrubber.js';
import { recorderStartSeconds } from '../wowza/recorder-time.js';
import { StreamRecorder } from '../wowza/schemas.js';
import type { Collector, PollContext } from './collector.js';
import { readEach } from './current-stats.js';
import type { InstanceRef } from './discovery.js';

/** The states wowza-api.md and Wowza's recorder examples show; others are kept and counted (LabelVocabulary). */
export const KNOWN_RECORDER_STATES = ['Recording in progress', 'Waiting for stream'];

/** `Recording in progress`, and whatever else Wowza may word as recording. */
const isRecording = (state: string | null | undefined) => /^recording\b/i.test((state ?? '').trim());

/** The recording start time (recorder-time.ts); empty while not recording, anything unreadable left out and counted. */
function startSeconds(value: string | null | undefined, out: MetricSet): number | undefined {
  const text = (value ?? '').trim();
  if (text === '') return undefined;
  const seconds = recorderStartSeconds(text);
  if (seconds !== undefined) return seconds;
  out.drop('recordingStartTime', 'unreadable');
  return undefined;
}

/** A known state in whatever case the server wrote it (a real 4.7 server: `Recording in Progress`) reads as the known one. */
function knownCase(state: string | null | undefined): string | null | undefined {
  const lower = (state ?? '').trim().toLowerCase();
  return KNOWN_RECORDER_STATES.find((k) => k.toLowerCase() === lower) ?? state;
}

/** One recorder's series; a recorder that does not read as StreamRecorderConfig is left out and counted. */
function addRecorder(ctx: PollContext, out: MetricSet, where: InstanceRef, raw: unknown): void {
  const parsed = StreamRecorder.safeParse(raw);
  if (!parsed.success) {
    out.drop('streamrecorder', 'unreadable');
    return;
  }
  const r = parsed.data;
  // Left out whole, before its name reaches a log line or the status page.
  if (labelValueTooLong(r.recorderName)) {
    out.drop('recorder', 'too_long');
    return;
  }
  const labels = { server: ctx.server, vhost: where.vhost, application: where.app, app_instance: where.instance.name, recorder: r.recorderName };
  const state = ctx.vocabulary('recorderState', KNOWN_RECORDER_STATES).label(knownCase(r.recorderState));
  if (!state.isKnown) out.unknown('recorderState', state.value);
  out.add(M.recorderRecording, labels, isRecording(r.recorderState) ? 1 : 0);
  const facts = ctx.vocabulary('fileFormat', ['MP4', 'FLV']).label(r.fileFormat || 'MP4');
  const segmentation = ctx.vocabulary('segmentationType', ['None', 'SegmentByDuration', 'SegmentBySize', 'SegmentBySchedule']).label(r.segmentationType || 'None');
  out.add(M.recorderInfo, { ...labels, state: state.value, format: facts.value, segmentation: segmentation.value }, 1);
  out.add(M.recorderSize, labels, r.currentSize, 'currentSize');
  out.add(M.recorderDuration, labels, r.currentDuration === null || r.currentDuration === undefined ? undefined : r.currentDuration / 1000, 'currentDuration');
  out.add(M.recorderStart, labels, startSeconds(r.recordingStartTime, out), 'recordingStartTime');
  // The server's words may quote a URL or a request with its credentials: scrubbed whole (a cut could keep the start
  // of a secret), then cleaned for a log line and a page.
  // eslint-disable-next-line no-control-regex -- a message for a log line and a page: no control characters
  const error = scrubReceived(r.recorderErrorString ?? '').replace(/[\u0000-\u001f\u007f]/g, ' ').trim().slice(0, 300);
  out.add(M.recorderError, labels, error === '' ? 0 : 1);
  // The message goes to the log (when it changes) and the status page, never into a label.
  const object = `${where.vhost}/${where.app}/${where.instance.name}/${r.recorderName}`;
  ctx.notices?.set(ctx.log, `recorder ${object}`, error, 'stream recorder reports an error');
  if (error !== '') out.notes.set(`recorder_error\u0000${object}`, error);
}

/**
 * Stream recorders, from the instance lists discovery already reads: no request of its own. Only an instance whose
 * list item has no `recorders` key (a server that leaves it out) is asked `{I}/streamrecorders`, one request each;
 * one that fails costs that instance's recorders, not the others.
 */
export const recorderCollector: Collector = {
  name: 'recorder',
  description: 'stream recorders (from the instance lists; {I}/streamrecorders where a server leaves them out)',
  async poll(ctx, out) {
    const topology = await ctx.discovery.get(ctx.signal);
    const without: InstanceRef[] = [];
    for (const ref of topology.instances) {
      if (ref.instance.recorders === undefined) without.push(ref);
      else for (const raw of ref.instance.recorders) addRecorder(ctx, out, ref, raw);
    }
    if (without.length === 0) return;
    await readEach(
      ctx,
      without,
      (ref) => `${ref.vhost}/${ref.app}/${ref.instance.name}`,
      (ref) => ctx.limit(() => ctx.client.streamRecorders(ref.vhost, ref.app, ref.instance.name, ctx.signal)),
      (ref, list) => {
        for (const raw of list.streamrecorder) addRecorder(ctx, out, ref, raw);
      },
    );
  },
};
