/**
 * The ways a secret can be written back by whatever quotes a request (issue 47): as itself, URL-encoded
 * (encodeURIComponent, form encoding, and every byte as `%XX` in either case), JSON-escaped (JSON.stringify, once
 * and twice, `\uXXXX` for every character in either case) and base64 (alone, as `user:secret`, and the part of it
 * that stands for the secret, or for it JSON-escaped, at each of the three byte offsets in longer base64 text). A
 * test searches what left the process for each of them.
 */
export function secretForms(secret: string, user?: string): Record<string, string> {
  const bytes = [...Buffer.from(secret, 'utf8')];
  const percent = (b: number) => `%${b.toString(16).padStart(2, '0')}`;
  const units = [...secret].flatMap((ch) => {
    const out: number[] = [];
    for (let i = 0; i < ch.length; i++) out.push(ch.charCodeAt(i));
    return out;
  });
  const forms: Record<string, string> = {
    literal: secret,
    encodeURIComponent: encodeURIComponent(secret),
    'form-encoded': new URLSearchParams({ v: secret }).toString().slice(2),
    'every byte %xx': bytes.map(percent).join(''),
    'every byte %XX': bytes.map(percent).join('').toUpperCase(),
    'JSON.stringify': JSON.stringify(secret).slice(1, -1),
    'JSON.stringify twice': JSON.stringify(JSON.stringify(secret).slice(1, -1)).slice(1, -1),
    '\\uxxxx': units.map((u) => `\\u${u.toString(16).padStart(4, '0')}`).join(''),
    '\\uXXXX': units.map((u) => `\\u${u.toString(16).padStart(4, '0').toUpperCase()}`).join(''),
    base64: Buffer.from(secret, 'utf8').toString('base64'),
    ...(user !== undefined ? { 'base64 user:secret': Buffer.from(`${user}:${secret}`, 'utf8').toString('base64') } : {}),
  };
  // In longer base64 text (a JSON body, a JWT's claims): the characters only the secret decides, at each byte offset.
  const escaped = JSON.stringify(secret).slice(1, -1);
  for (const [name, value] of [['', secret], ['JSON-escaped ', escaped]] as const) {
    if (name !== '' && value === secret) continue;
    const length = Buffer.byteLength(value);
    for (let offset = 0; offset < 3; offset++) {
      const encoded = Buffer.concat([Buffer.alloc(offset, 0x41), Buffer.from(value, 'utf8')]).toString('base64');
      forms[`base64 of ${name}secret at offset ${offset}`] = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + length)) / 6));
    }
  }
  return forms;
}

/** `where: form` for every form of `secret` found in `text` (an empty list when none is). */
export function secretLeaks(where: string, text: string, secret: string, user?: string): string[] {
  return Object.entries(secretForms(secret, user))
    .filter(([, form]) => form !== '' && text.includes(form))
    .map(([name]) => `${where}: ${name}`);
}
