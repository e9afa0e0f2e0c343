/**
 * The projector process's operations endpoints (lib/http/ops.ts): GET /health (process up),
 * GET /ready (200 when every projection's consumer is in its group and its last database access
 * succeeded, else 503, with each check in the body), GET /metrics (the process registry, shared
 * by the three projections).
 */
import { type OpsServer, startOpsServer as startLibOpsServer } from '../../lib/http/ops.ts';
import type { ProjectorMetrics } from './metrics.ts';

/** What the endpoints read; a RoundsProjector is one, `projectorProcessView` combines several. */
export interface ProjectorView {
  ready(): boolean;
  status(): Readonly<Record<string, unknown>>;
  readonly metrics: Pick<ProjectorMetrics, 'registry'>;
}

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

/**
 * Listens on `host`:`port` (0 = any free port).
 * @returns the server and the bound port.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export function startOpsServer(view: ProjectorView, host: string, port: number): Promise<OpsServer> {
  return startLibOpsServer({
    host,
    port,
    registry: view.metrics.registry,
    ready: () => ({ ready: view.ready(), ...view.status() }),
  });
}
