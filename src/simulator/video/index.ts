export { startVideoSimulator, VIDEO_API_PATH, type VideoSimulator, type VideoSimulatorOptions } from './video-simulator.js';
export { ScheduleStore, videoSchedule, SUMMARY_FIELDS, type VideoSchedule, type VideoScheduleSummary } from './schedule-store.js';
