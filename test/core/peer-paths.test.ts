// A peer's path as the peer_path gauge and the Events say it (core/peer-paths.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { peerPaths } from '../../src/core/peer-paths.ts';
import { fcc, snapshotOf, tunnelValues } from '../support/builders.ts';

test('a peer with a usable pair and a setting an operator can fix is said by the fixable reason, on the hub path', () => {
  const tunnels = tunnelValues([['cluster3', 'Connected']]);
  const paths = (fccs: Parameters<typeof snapshotOf>[0]) => peerPaths(snapshotOf(fccs, tunnels), 'cluster2').map((s) => [s.peer, s.path, s.reason]);
  assert.deepEqual(paths([fcc()]), [['cluster3', 'direct', 'direct']]);
  // A second FCC for the same peer whose remapped CIDR is narrower: the fixable problem is what the operator must see.
  assert.deepEqual(paths([fcc(), fcc({ name: 'second', aRemapped: '10.61.0.0/24' })]), [['cluster3', 'hub', 'prefix-mismatch']]);
});
