// The end-to-end suite's Go builds, run by test/run.mjs before the e2e files so that they fall outside every test
// file's timeout: on Node 22 `--test-timeout` bounds a whole file, hooks included, and a cold build of the control
// plane alone takes 16 to 28 minutes on 2 shared cores (docs/development.md). Cached, each is a look at a directory.
// Nothing is built where the suite or the data path is skipped.
import { buildControlPlane } from '../controlplane/build.ts';
import { buildKubeProxy, buildWireguard } from '../datapath-tools/build.ts';
import { buildHubReflector } from '../hub-reflector/build.ts';
import { buildLiqoWriter } from '../liqo-writer/build.ts';
import { dataPathUnavailable } from './datapath/netns.ts';
import { skipReason } from './skip.ts';

const log = (line: string) => process.stdout.write(`# ${line}\n`);
if (!skipReason()) {
  const builds = [buildControlPlane, buildLiqoWriter, buildHubReflector];
  if (process.argv.includes('--datapath') && (process.env.CI || dataPathUnavailable() === undefined)) builds.push(buildWireguard, buildKubeProxy);
  for (const build of builds) {
    const built = build(log);
    log(built.built ? `built ${built.dir} in ${built.seconds} s` : `cached ${built.dir}`);
  }
}
