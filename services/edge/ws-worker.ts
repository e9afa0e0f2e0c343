/**
 * A WebSocket worker thread of the edge (ws-threads.ts): the edge (edge.ts) with the WebSocket
 * transport only, on the main thread's WebSocket port (SO_REUSEPORT), its HTTP server on a free
 * port of its own (nothing is served there that the main thread does not serve). The environment is
 * the process's (worker threads get a copy). Stops on the main thread's `stop`: drains its sockets,
 * closes its uWebSockets.js app (a thread must close it before it ends), then exits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../../lib/logger.ts';
import { loadEdgeConfig } from './config.ts';
import { buildEdge } from './edge.ts';
import { createWsTransport } from './transports/ws/ws.ts';
import type { FromWorker, ToWorker, WorkerData } from './ws-threads.ts';

const port = parentPort;
if (!port) throw new Error('services/edge/ws-worker.ts runs as a worker thread of the edge');
const data = workerData as WorkerData;
const send = (m: FromWorker) => port.postMessage(m);

const config = loadEdgeConfig(process.env, { EDGE_WS_PORT: data.wsPort, EDGE_HTTP_PORT: 0 });
const logger = createLogger('edge', config.process.logLevel).child({ thread: data.index });
const edge = buildEdge({ config, logger, transports: [createWsTransport()] });
// The thread's series stay apart from the main thread's in /metrics (sum them by `service`).
edge.metrics.register.setDefaultLabels({ service: 'edge', thread: String(data.index) });

port.on('message', (m: ToWorker) => {
  if (m.type === 'metrics') {
    edge.metrics.register
      .getMetricsAsJSON()
      .then((all) =>
        send({
          type: 'metrics',
          id: m.id,
          metrics: all.filter((x) => !x.name.startsWith('process_') && !x.name.startsWith('nodejs_')),
        }),
      )
      .catch(() => send({ type: 'metrics', id: m.id, metrics: [] }));
  } else if (m.type === 'stop') {
    edge
      .stop(m.drainMs)
      .catch((err) => logger.error({ err }, 'WebSocket thread stop failed'))
      .finally(() => {
        send({ type: 'stopped' });
        port.close();
      });
  }
});

try {
  await edge.start();
  send({ type: 'ready' });
} catch (err) {
  logger.error({ err }, 'WebSocket thread failed to start');
  await edge.stop(0).catch(() => {});
  send({ type: 'failed', message: (err as Error).message });
  port.close();
}
