// Whether the end-to-end suite runs here. It needs Go to build its control plane (once); outside CI a machine without
// Go and without the built binaries skips it and says why, in CI (CI=true, as .ci/run sets) a missing Go is a failure: the build reports it.
import { builtIn, controlPlaneDir, goAvailable } from '../controlplane/build.ts';

let said = false;

export function skipReason(): string | false {
  // Binaries already built for this go.mod/go.sum run without Go.
  if (process.env.CI || builtIn(controlPlaneDir()) || goAvailable()) return false;
  const reason = 'Go is not installed: the end-to-end suite builds kube-apiserver and etcd from Go modules (install Go 1.26)';
  if (!said) process.stdout.write(`# e2e skipped: ${reason}\n`);
  said = true;
  return reason;
}
