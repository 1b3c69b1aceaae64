/**
 * The XML the REST API answers when the client does not ask for JSON: a root element named after the
 * resource, one PascalCase element per field, arrays as a wrapper holding one element per item.
 */

/** Element names for the items of known arrays; others take the singular of their field name. */
const ITEM_NAMES: Record<string, string> = {
  vhosts: 'VHost',
  applications: 'Application',
  instanceList: 'ApplicationInstance',
  incomingStreams: 'IncomingStream',
  outgoingStreams: 'OutgoingStream',
  recorders: 'StreamRecorder',
  streamrecorder: 'StreamRecorder',
  mapEntries: 'MapEntry',
  streamGroups: 'StreamGroup',
  serverLogType: 'LogType',
  serverLogFiles: 'LogFile',
  logLines: 'LogLine',
  entries: 'Entry',
};

// XML 1.0 forbids most control characters even when escaped.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const INVALID_XML_CHARS = /[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;

export function escapeXml(text: string): string {
  return text.replace(INVALID_XML_CHARS, '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** A field name as an element name: `bytesIn` -> `BytesIn`; characters XML does not allow become `_`. */
export function elementName(key: string): string {
  let name = key.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (!/^[A-Za-z_]/.test(name)) name = '_' + name;
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function itemName(key: string): string {
  return ITEM_NAMES[key] ?? elementName(key.endsWith('s') && key.length > 1 ? key.slice(0, -1) : 'item');
}

function render(name: string, value: unknown, key: string, out: string[]): void {
  if (value === null || value === undefined) {
    out.push(`<${name}/>`);
  } else if (Array.isArray(value)) {
    out.push(`<${name}>`);
    const item = itemName(key);
    for (const v of value) render(item, v, item, out);
    out.push(`</${name}>`);
  } else if (typeof value === 'object') {
    out.push(`<${name}>`);
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) render(elementName(k), v, k, out);
    out.push(`</${name}>`);
  } else {
    out.push(`<${name}>${escapeXml(String(value))}</${name}>`);
  }
}

export function toXml(root: string, body: unknown): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'];
  render(root, body, root, out);
  out.push('\n');
  return out.join('');
}
