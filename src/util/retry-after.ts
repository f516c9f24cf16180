// The wait a Retry-After header asks for (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date. The API server sends
// delta-seconds with a 429 (API Priority and Fairness rejecting a request) and with some 503s and 504s.

/**
 * Milliseconds to wait, within [0, maxMs]; undefined when the header is absent or says nothing readable (the caller
 * then waits as it would without one). `now` is the epoch milliseconds an HTTP-date is measured from.
 */
export function retryAfterMs(value: string | undefined, options: { readonly now: number; readonly maxMs: number }): number | undefined {
  const text = value?.trim();
  if (text === undefined || text === '') return undefined;
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const date = Date.parse(text);
    // An HTTP-date names a weekday and a month; anything Date.parse reads that is not one (a bare "3.5") is refused.
    if (Number.isNaN(date) || !/[A-Za-z]/.test(text)) return undefined;
    ms = date - options.now;
  }
  return Math.min(options.maxMs, Math.max(0, ms));
}
