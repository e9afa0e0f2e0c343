/**
 * Reference WebSocket servers of `npm run bench -- peers`, for scale only: the same
 * rounds from the same topic, sent to every subscriber of `/ws/crash` as the edge's stream-form
 * JSON, with nothing else the edge does (no access checks, resumes, metrics or slow-consumer
 * limits). Under Bun it is Bun's built-in server (uWebSockets inside) with its native topic
 * publish; under Node it is the `ws` package, one `send` per subscriber.
 *
 * Environment: KAFKA_BROKERS (comma-separated), TOPIC (full name), PORT. GET /ready answers 200
 * once the consumer has joined (it reads from the end of the topic, like the edge).
 * Usage: bun bench/peers-ref.ts | node --import tsx bench/peers-ref.ts
 */
import { createServer } from 'node:http';
import { Kafka, logLevel } from 'kafkajs';
import { WebSocketServer } from 'ws';
import { decodeRoundEvent } from '../lib/log/rounds-codec.ts';
import { toStreamForm } from '../rules/rounds/round.ts';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:19092').split(',');
const topic = process.env.TOPIC ?? 'rounds';
const port = Number(process.env.PORT ?? 0);
let ready = false;

/** Sends `json` to every subscriber; set by the server below. */
let broadcast: (json: string) => void = () => {};

interface BunServer {
  publish(topic: string, data: string): number;
  upgrade(req: Request): boolean;
}
interface BunSocket {
  subscribe(topic: string): void;
}
declare const Bun:
  | {
      serve(o: {
        hostname: string;
        port: number;
        fetch(req: Request, server: BunServer): Response | undefined;
        websocket: { open(ws: BunSocket): void; message(): void };
      }): BunServer;
    }
  | undefined;

if (typeof Bun !== 'undefined') {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    fetch(req, srv) {
      const path = new URL(req.url).pathname;
      if (path === '/ws/crash')
        return srv.upgrade(req) ? undefined : new Response('no upgrade', { status: 400 });
      return new Response(ready ? 'ready' : 'starting', { status: ready ? 200 : 503 });
    },
    websocket: {
      open: (ws) => ws.subscribe('crash'),
      message: () => {},
    },
  });
  broadcast = (json) => {
    server.publish('crash', json);
  };
} else {
  const http = createServer((_req, res) => {
    res.statusCode = ready ? 200 : 503;
    res.end(ready ? 'ready' : 'starting');
  });
  const wss = new WebSocketServer({ server: http, path: '/ws/crash', perMessageDeflate: false });
  http.listen(port, '127.0.0.1');
  broadcast = (json) => {
    for (const ws of wss.clients) ws.send(json);
  };
}

const kafka = new Kafka({ clientId: 'bench-peers-ref', brokers, logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({
  groupId: `bench-peers-ref-${process.pid}-${Date.now()}`,
  maxWaitTimeInMs: 50,
});
consumer.on(consumer.events.GROUP_JOIN, () => {
  ready = true;
});
await consumer.connect();
await consumer.subscribe({ topics: [topic], fromBeginning: false });
await consumer.run({
  eachMessage: async ({ message }) => {
    let event: ReturnType<typeof decodeRoundEvent>;
    try {
      event = decodeRoundEvent(message.value);
    } catch {
      return; // another server's record (the JSON twin for Centrifugo)
    }
    if (event.type !== 'RoundFinished' || event.game_slug !== 'crash') return;
    broadcast(JSON.stringify(toStreamForm(event, Number(message.timestamp))));
  },
});

const stop = async () => {
  await consumer.disconnect().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
