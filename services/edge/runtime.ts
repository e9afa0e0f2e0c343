/**
 * The Node flags the edge runs with (scripts/start.sh, docker-compose.yml's edge services and the
 * edge benchmarks' bench/edge-harness.ts pass them; tests/compose.e2e.test.ts and
 * tests/edge-runtime.unit.test.ts check that they do).
 *
 * `--max-semi-space-size=4` (MB): V8 grows its young generation to absorb a burst of allocations
 * (10k WebSocket handshakes at once) and keeps it committed afterwards; with its default the edge's
 * resident memory grew 3.3 KiB per connection at 10k while its live JS heap grew 0.4 KiB. Capped at
 * 4 MB per semi-space: 1.20 KiB per connection at 10k and 1.36 at 1k (target ≤ 2 KiB), at
 * 0.99× the deliveries per CPU-second (`npm run bench -- peers --servers edge,edge-s1,edge-s4`,
 * 2026-11-25, docs/decisions/runtime/0013-edge-young-generation-cap.md).
 */
export const EDGE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];
