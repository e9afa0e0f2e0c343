/**
 * Access-control benchmarks: token verification per second on one core,
 * REST p99 of /api/latest/crash with auth on against auth off, WebSocket connection setup rate
 * with tokens, each beside its baseline in the same run. Prints tables; asserts nothing beyond
 * "every request and connection succeeded" (the figures are read against the targets).
 *
 * Usage: tsx bench/auth.ts [--only verify|rest|ws] [--verify-seconds 3] [--seconds 6]
 *          [--connections 20] [--rounds 3] [--ws-connections 10000] [--ws-batch 100]
 *          [--ws-rounds 5] [--no-control]
 * --no-control drops the REST control load (auth-off process sent the key).
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { benchRest } from './auth-rest.ts';
import { benchVerify } from './auth-verify.ts';
import { benchWs } from './auth-ws.ts';
import { report } from './lib.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    'verify-seconds': { type: 'string', default: '3' },
    seconds: { type: 'string', default: '6' },
    connections: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    'no-control': { type: 'boolean', default: false },
    'ws-rounds': { type: 'string', default: '5' },
    'ws-connections': { type: 'string', default: '10000' },
    'ws-batch': { type: 'string', default: '100' },
  },
});
const num = (name: keyof typeof values, min: number): number => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}`);
  return n;
};
const only = values.only;
if (only !== undefined && !['verify', 'rest', 'ws'].includes(only))
  throw new Error(`--only must be verify, rest or ws (got '${only}')`);
const want = (w: string) => only === undefined || only === w;

console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`);
if (want('verify')) {
  const s = num('verify-seconds', 0.1);
  report(`Credential verification on one core (${s} s per case, one thread)`, benchVerify(s));
}
if (want('rest')) {
  const o = { seconds: num('seconds', 1), connections: num('connections', 1), rounds: num('rounds', 1) };
  const r = await benchRest({ ...o, control: !values['no-control'] });
  const title = `GET /api/latest/crash, autocannon ${o.connections} connections, ${o.seconds} s per load, loopback`;
  report(`${title}: loads (alternating)`, r.loads);
  report(`${title}: auth on vs off`, r.summary);
}
if (want('ws')) {
  const o = { connections: num('ws-connections', 1), batch: num('ws-batch', 1), rounds: num('ws-rounds', 1) };
  const r = await benchWs(o);
  const title = `WebSocket setup to /ws/crash, ${o.connections} per mode in batches of ${o.batch}, loopback`;
  report(`${title}: runs (alternating)`, r.runs);
  report(`${title}: tokens vs none`, r.summary);
}
