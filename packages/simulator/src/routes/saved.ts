import { resource, type Reply } from '../reply.js';

/** What the REST API answers a successful save with (201 for creates, 200 for updates). */
export const saved = (status: 200 | 201): Reply => resource('WMSResponse', { success: true, message: 'Saved', data: null }, status);

/** What it answers a successful delete with. */
export const deleted = (): Reply => resource('WMSResponse', { success: true, message: 'Deleted', data: null });
