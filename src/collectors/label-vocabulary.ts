/** Distinct values a field may add beyond the known ones, per server; the rest read `other`. */
export const MAX_UNKNOWN_VALUES = 20;
/** A label value longer than this is cut: a state or status is a few words. */
const MAX_VALUE_LENGTH = 64;

/**
 * Turns a string the server sends (a recorder state, a stream target status) into a label value from a bounded set:
 * the known values as they are, new ones kept as they came (cut to 64 characters, control characters removed) up to
 * 20 per server, `other` beyond. A server, hostile or new, cannot mint series without limit; a state Wowza adds still
 * shows. `isKnown` tells the caller whether to count the value as unknown.
 */
export class LabelVocabulary {
  private readonly known: ReadonlySet<string>;
  private readonly added = new Set<string>();

  constructor(known: Iterable<string>) {
    this.known = new Set(known);
  }

  label(raw: string | null | undefined): { value: string; isKnown: boolean } {
    // Cut before cleaning: a hostile value may be megabytes, and only its start can become the label.
    // eslint-disable-next-line no-control-regex -- removing control characters is the point
    const value = (raw ?? '').slice(0, 4 * MAX_VALUE_LENGTH).replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, MAX_VALUE_LENGTH);
    if (this.known.has(value)) return { value, isKnown: true };
    if (value === '') return { value: 'unknown', isKnown: false };
    if (this.added.has(value)) return { value, isKnown: false };
    if (this.added.size < MAX_UNKNOWN_VALUES) {
      this.added.add(value);
      return { value, isKnown: false };
    }
    return { value: 'other', isKnown: false };
  }
}

/** One vocabulary per field, for the lifetime of what holds it (a server's runtime, one probe). */
export function vocabularyCache(): (field: string, known: readonly string[]) => LabelVocabulary {
  const byField = new Map<string, LabelVocabulary>();
  return (field, known) => {
    let v = byField.get(field);
    if (!v) byField.set(field, (v = new LabelVocabulary(known)));
    return v;
  };
}
