// Kubernetes' MicroTime, as Leases (renewTime, acquireTime) and events.k8s.io Events (eventTime, series) carry it:
// RFC 3339 with six fractional digits, where JavaScript's clock gives three.
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
