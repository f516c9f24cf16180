// The sections of `npm run bench`, in the order they run. Not product code.
export const SECTIONS = ['rewrite', 'snapshot', 'stock', 'shadow', 'admission', 'controller', 'startup', 'offline', 'status', 'writepath', 'scale', 'failover', 'heartbeat'] as const;
export type Section = (typeof SECTIONS)[number];

/**
 * The sections on the e2e suite's real kube-apiserver and etcd (built from Go modules): the test suite runs them, at a
 * tiny size, among the e2e tests (test/e2e/bench.test.ts), the others in test/bench.test.ts.
 */
export const CONTROL_PLANE_SECTIONS: readonly Section[] = ['status', 'writepath', 'scale', 'failover', 'heartbeat'];

export function isSection(name: string): name is Section {
  return SECTIONS.some((section) => section === name);
}
