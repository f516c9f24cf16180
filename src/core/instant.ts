// Epoch milliseconds as RFC 3339 UTC text, computed rather than read through Date: the core reads no clock, and its
// texts (a stale heartbeat's "since") must be the same for the same input wherever they are made.

/** The civil date of a day count since 1970-01-01 (Howard Hinnant's days_from_civil, inverted). */
function civil(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shifted = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1;
  const month = shifted < 10 ? shifted + 3 : shifted - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

const two = (n: number): string => String(n).padStart(2, '0');

/** `2026-11-28T13:05:07.250Z`, as Date's toISOString prints it for years 0 to 9999. */
export function instantText(epochMs: number): string {
  const ms = Math.floor(epochMs);
  const days = Math.floor(ms / 86_400_000);
  const inDay = ms - days * 86_400_000;
  const { year, month, day } = civil(days);
  const hours = Math.floor(inDay / 3_600_000);
  const minutes = Math.floor((inDay % 3_600_000) / 60_000);
  const seconds = Math.floor((inDay % 60_000) / 1000);
  return `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(seconds)}.${String(inDay % 1000).padStart(3, '0')}Z`;
}
