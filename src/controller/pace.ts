// The controller's pace by default (serve's --max-concurrent-patches and --max-patches-per-second). Its own file, with
// no imports: the command line's defaults read it without loading the Kubernetes client.

/**
 * Patches in flight at once. bench section scale measures a plain client patching the stored slices through the
 * webhook at 1 to 16 in flight (docs/performance.md, "The failover floor"): on 2 cores the API server's rate does not
 * rise past a few in flight, and more only queues inside it, taking seats of API Priority and Fairness (its
 * workload-low level, shared by every service account) from other clients.
 */
export const DEFAULT_MAX_CONCURRENT_PATCHES = 8;

/**
 * The cap on the controller's requests per second: a guard where API Priority and Fairness is off, not the pace.
 * 500 was the pace itself on a quiet 2-core leaf: the pass ran at 505 slices/s where a plain client, 16 in flight,
 * patched 712/s (bench section scale, docs/performance.md), and a failover of 20,000 slices took the bucket's 39 s.
 * At 1,000 the in-flight bound and the API server set the pace.
 */
export const DEFAULT_MAX_PATCHES_PER_SECOND = 1000;
