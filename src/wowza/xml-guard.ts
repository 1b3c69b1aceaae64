/**
 * The caps of an XML document from a server (the connectioncounts provider's), with wide margins over real ones,
 * and the guard that enforces them on the bytes as they come: a document past a cap is refused at the byte that
 * passes it, before it is buffered whole or handed to the parser. Each cap bounds a cost the parser would
 * otherwise pay on the thread that answers /metrics and the health checks (or a label value it would produce).
 */
export const XML_LIMITS = {
  /**
   * Elements open at once. A real document nests 6 deep (root > VHost > Application > ApplicationInstance > Stream
   * > SessionsX), the flat form 2.
   */
  depth: 32,
  /**
   * Elements in the document. The tree form has about 10 per stream (Stream, Name, the Sessions* counters), the
   * flat form 1: this is a 200,000-stream tree, or 2,000,000 streams flat.
   */
  elements: 2_000_000,
  /** Attributes of one element: a flat `<Stream>` has 4 names and 8 session counts. */
  attributes: 64,
  /** Bytes of an element or attribute name: the longest real one, `ConnectionsTotalAccepted`, has 24. */
  nameBytes: 256,
  /**
   * Bytes of one attribute value, text between tags, comment, CDATA section, processing instruction or DOCTYPE.
   * Values are names (URL-encoded, so `%XX` triples them) and counts.
   */
  valueBytes: 8192,
  /**
   * Bytes of the whole document (`max_response_size` caps it first when smaller). A flat stream takes about 300
   * bytes: 64 MiB holds 200,000 streams.
   */
  documentBytes: 64 * 1024 * 1024,
} as const;

/** The root elements of a connectioncounts document, by server generation. */
export const CONNECTION_COUNTS_ROOTS: ReadonlySet<string> = new Set(['WowzaStreamingEngine', 'WowzaMediaServer']);

export type XmlLimits = { readonly [K in keyof typeof XML_LIMITS]: number };

// Lexer states: enough of XML's syntax to know where tags, attribute values and markup start and end.
const TEXT = 0;
const LT = 1; // just after `<`
const START_TAG = 2;
const ATTR_VALUE = 3;
const END_TAG = 4;
const BANG = 5; // just after `<!`
const BANG_DASH = 6; // just after `<!-`
const COMMENT = 7;
const CDATA = 8;
const PI = 9;
const DOCTYPE = 10;

const C_LT = 0x3c;
const C_GT = 0x3e;
const C_SLASH = 0x2f;
const C_BANG = 0x21;
const C_QUESTION = 0x3f;
const C_DASH = 0x2d;
const C_LBRACKET = 0x5b;
const C_RBRACKET = 0x5d;
const C_EQUALS = 0x3d;
const C_QUOT = 0x22;
const C_APOS = 0x27;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
/** A byte of a name in a start tag: none of the delimiters startTag looks for. */
const isNameByte = (c: number) => c !== C_GT && c !== C_QUOT && c !== C_APOS && c !== C_EQUALS && c !== C_SLASH && !isSpace(c);

/**
 * Reads an XML document's bytes in any chunks, and says which cap it passed, if any. A lexer, not a parser: it does
 * not check well-formedness (the parser does), so it is exact for well-formed documents and errs for broken ones
 * only in ways the parser then refuses anyway. UTF-8 needs no decoding here: every byte of a multi-byte character
 * is above 0x7F, never one of the delimiters.
 */
export class XmlGuard {
  private state = TEXT;
  private depth = 0;
  private elements = 0;
  private attributes = 0;
  /** Bytes of the current name, value, text or markup. */
  private run = 0;
  /** In a start tag: whether the last byte outside a value was `/` (so `>` closes an empty element). */
  private slash = false;
  private quote = 0;
  /** Closing delimiters seen in a row (`-` of `-->`, `]` of `]]>`, `?` of `?>`). */
  private closing = 0;
  /** `[` minus `]` in a DOCTYPE (its internal subset may hold `>`). */
  private brackets = 0;
  /** The first element's name, while it is read: a document with another root is refused by name. */
  private rootName: number[] | undefined = [];
  private refused: string | undefined;

  constructor(
    private readonly limits: XmlLimits = XML_LIMITS,
    /** Root elements the document may have; any other is refused at once, saying which it has. */
    private readonly roots: ReadonlySet<string> | undefined = CONNECTION_COUNTS_ROOTS,
  ) {}

  /** Reads more bytes; the reason the document is refused, once it is (and from then on). */
  refuse(bytes: Uint8Array): string | undefined {
    if (this.refused) return this.refused;
    const l = this.limits;
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes[i]!;
      switch (this.state) {
        case TEXT: {
          if (c === C_LT) {
            this.enter(LT);
            break;
          }
          // Runs of text and values are skipped to their end natively: most of a document's bytes are in them.
          const end = this.skipTo(bytes, i, C_LT);
          if (this.run > l.valueBytes) return this.fail(`XML text longer than ${l.valueBytes} bytes between two tags`);
          i = end - 1;
          break;
        }
        case LT:
          if (c === C_SLASH) this.enter(END_TAG);
          else if (c === C_QUESTION) this.enter(PI);
          else if (c === C_BANG) this.enter(BANG);
          else {
            if (++this.depth > l.depth) return this.fail(`XML nested deeper than ${l.depth} levels`);
            if (++this.elements > l.elements) return this.fail(`XML with more than ${l.elements} elements`);
            this.enter(START_TAG);
            this.attributes = 0;
            this.slash = false;
            const why = this.startTag(c);
            if (why) return this.fail(why);
          }
          break;
        case START_TAG: {
          // The rest of a name (an element's or an attribute's) at once, up to its delimiter: most of a flat
          // document's bytes outside values are attribute names, which took a call each. The root's name goes
          // byte by byte, to be collected.
          if (isNameByte(c) && !(this.rootName && this.elements === 1)) {
            let end = i + 1;
            while (end < bytes.length && isNameByte(bytes[end]!)) end++;
            this.run += end - i;
            this.slash = false;
            if (this.run > l.nameBytes) return this.fail(`an XML name longer than ${l.nameBytes} bytes`);
            i = end - 1;
            break;
          }
          const why = this.startTag(c);
          if (why) return this.fail(why);
          break;
        }
        case ATTR_VALUE: {
          if (c === this.quote) {
            this.enter(START_TAG);
            break;
          }
          const end = this.skipTo(bytes, i, this.quote);
          if (this.run > l.valueBytes) return this.fail(`an XML attribute value longer than ${l.valueBytes} bytes`);
          i = end - 1;
          break;
        }
        case END_TAG:
          if (c === C_GT) {
            if (this.depth > 0) this.depth--;
            this.enter(TEXT);
          } else if (++this.run > l.nameBytes) return this.fail(`an XML name longer than ${l.nameBytes} bytes`);
          break;
        case BANG:
          if (c === C_DASH) this.state = BANG_DASH;
          else if (c === C_LBRACKET) this.enter(CDATA);
          else {
            this.enter(DOCTYPE);
            this.brackets = 0;
          }
          break;
        case BANG_DASH:
          this.enter(COMMENT);
          break;
        case COMMENT:
        case CDATA:
        case PI:
          // `-->`, `]]>`, `?>`: the markup ends at `>` after enough of its closing delimiter.
          if (c === C_GT && this.closing >= (this.state === PI ? 1 : 2)) this.enter(TEXT);
          else {
            this.closing = c === (this.state === COMMENT ? C_DASH : this.state === CDATA ? C_RBRACKET : C_QUESTION) ? this.closing + 1 : 0;
            if (++this.run > l.valueBytes) return this.fail(`an XML ${this.state === COMMENT ? 'comment' : this.state === CDATA ? 'CDATA section' : 'processing instruction'} longer than ${l.valueBytes} bytes`);
          }
          break;
        case DOCTYPE:
          if (c === C_GT && this.brackets <= 0) this.enter(TEXT);
          else {
            if (c === C_LBRACKET) this.brackets++;
            else if (c === C_RBRACKET) this.brackets--;
            if (++this.run > l.valueBytes) return this.fail(`an XML DOCTYPE longer than ${l.valueBytes} bytes`);
          }
          break;
      }
    }
    return undefined;
  }

  /** Adds the bytes from `from` to the next `delimiter` (or the chunk's end) to the run; where they end. */
  private skipTo(bytes: Uint8Array, from: number, delimiter: number): number {
    const found = bytes.indexOf(delimiter, from);
    const end = found === -1 ? bytes.length : found;
    this.run += end - from;
    return end;
  }

  /** One byte of a start tag (its name, attribute names, `=`, quotes, `/`, `>`); the cap it passed, if any. */
  private startTag(c: number): string | undefined {
    const l = this.limits;
    if (c === C_GT) {
      const root = this.endRootName();
      if (this.slash && this.depth > 0) this.depth--;
      this.enter(TEXT);
      return root;
    }
    if (c === C_QUOT || c === C_APOS) {
      if (++this.attributes > l.attributes) return `an XML element with more than ${l.attributes} attributes`;
      this.enter(ATTR_VALUE);
      this.quote = c;
      this.slash = false;
      return undefined;
    }
    if (isSpace(c) || c === C_EQUALS) {
      this.run = 0;
      this.slash = false;
      return this.endRootName();
    }
    this.slash = c === C_SLASH;
    if (this.slash) return this.endRootName();
    if (++this.run > l.nameBytes) return `an XML name longer than ${l.nameBytes} bytes`;
    if (this.rootName && this.elements === 1) this.rootName.push(c);
    return undefined;
  }

  /** At the end of the first element's name: a root the document may not have is refused, by name. */
  private endRootName(): string | undefined {
    const bytes = this.rootName;
    if (!bytes || this.elements !== 1) return undefined;
    this.rootName = undefined;
    const name = Buffer.from(bytes).toString('utf8');
    if (!this.roots || this.roots.has(name)) return undefined;
    return `the root element is <${name}>, not <${[...this.roots][0]}>: is this the connectioncounts URL?`;
  }

  private enter(state: number): void {
    this.state = state;
    this.run = 0;
    this.closing = 0;
  }

  private fail(why: string): string {
    this.refused = why;
    return why;
  }
}
