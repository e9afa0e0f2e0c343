/**
 * The projector process's operations endpoints (lib/http/ops.ts): GET /health (process up),
 * GET /ready (200 when every projection's consumer is in its group and its last database access
 * succeeded, else 503, with each check in the body), GET /metrics (the process registry, shared
 * by the three projections).
 */
import type { OpsView } from '../../lib/http/ops.ts';

/** What the endpoints read; a RoundsProjector is one, `projectorProcessView` combines several. */
export type ProjectorView = OpsView;

/**
 * The view of a process running several projections: ready when all are; `status()` names the
 * rounds projector's two halves (consumer, database) and each projection's readiness.
 */
export function projectorProcessView(
  rounds: ProjectorView,
  others: Readonly<Record<string, { ready(): boolean }>>,
): ProjectorView {
  const readiness = () => ({
    rounds: rounds.ready(),
    ...Object.fromEntries(Object.entries(others).map(([name, p]) => [name, p.ready()])),
  });
  return {
    metrics: rounds.metrics,
    ready: () => Object.values(readiness()).every(Boolean),
    status: () => ({ ...rounds.status(), projections: readiness() }),
  };
}
