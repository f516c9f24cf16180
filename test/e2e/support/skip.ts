// Whether the end-to-end suite runs here. It needs Go to build its control plane; outside CI a machine without Go
// skips it and says why, in CI (CI=true, as .ci/run sets) a missing Go is a failure: the build reports it.
import { goAvailable } from '../controlplane/build.ts';

let said = false;

export function skipReason(): string | false {
  if (goAvailable() || process.env.CI) return false;
  const reason = 'Go is not installed: the end-to-end suite builds kube-apiserver and etcd from Go modules (install Go 1.26)';
  if (!said) process.stdout.write(`# e2e skipped: ${reason}\n`);
  said = true;
  return reason;
}
