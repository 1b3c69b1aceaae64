export { startVideoSimulator, type VideoSimulator, type VideoSimulatorFaults } from './video-simulator.js';
export type { VideoSimulatorOptions } from './options.js';
export { VIDEO_API_PATH } from './routes.js';
export { ScheduleStore } from './schedule-store.js';
export { videoSchedule } from './schedule-fixture.js';
export { SUMMARY_FIELDS, type VideoSchedule, type VideoScheduleSummary } from './schedule-object.js';
export type { InjectableField, RateLimitFault, UnknownValueFault } from './faults.js';
export { errorBody, type ErrorBody } from './error-body.js';
