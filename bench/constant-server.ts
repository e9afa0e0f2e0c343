/**
 * Baseline server for bench/rest.ts: a bare fastify route that returns a constant JSON body,
 * so the REST figures can be read against what fastify itself costs on this machine.
 * Usage: tsx bench/constant-server.ts <port>
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const body = {
  game_slug: 'crash',
  game_type: 'multiplier',
  finished_at: '2026-01-01T00:00:00.000Z',
  value: '2.00',
};
app.get('/constant', async () => body);
await app.listen({ host: '127.0.0.1', port: Number(process.argv[2] ?? 0) });
console.log('listening');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
