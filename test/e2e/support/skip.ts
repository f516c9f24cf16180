// Whether the end-to-end suite runs here. It needs Go to build its control plane, Liqo's writer and Liqo's hub
// reflection (once); outside CI a machine without Go and without the built binaries skips it and says why, in CI
// (CI=true, as .ci/run sets) a missing Go is a failure: the build reports it.
import { builtIn, controlPlaneDir, goAvailable } from '../controlplane/build.ts';
import { hubReflectorBuilt } from '../hub-reflector/build.ts';
import { liqoWriterBuilt } from '../liqo-writer/build.ts';

let said = false;

export function skipReason(): string | false {
  // Binaries already built for these go.mod/go.sum run without Go.
  if (process.env.CI || (builtIn(controlPlaneDir()) && liqoWriterBuilt() && hubReflectorBuilt()) || goAvailable()) return false;
  const reason = 'Go is not installed: the end-to-end suite builds kube-apiserver, etcd and Liqo\'s writer and reflector from Go modules (install Go 1.26)';
  if (!said) process.stdout.write(`# e2e skipped: ${reason}\n`);
  said = true;
  return reason;
}
