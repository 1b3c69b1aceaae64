/**
 * A Loki entry's timestamp: Unix nanoseconds as a decimal string. Up to 2^53 ms the digits of the milliseconds
 * followed by six zeros are exact; BigInt costs more than the line. Written by the encoder before each Loki line,
 * and by the push body for entries the encoder did not write (webhook events, lines read without a time).
 */
export function lokiNanoseconds(ms: number): string {
  const whole = Math.max(0, Math.trunc(ms));
  return whole === 0 ? '0' : Number.isSafeInteger(whole) ? `${whole}000000` : (BigInt(whole) * 1_000_000n).toString();
}
