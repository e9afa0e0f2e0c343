/**
 * REST cost of access control (target: p99 overhead under 10 %): two real API
 * processes (services/api/main.ts) on the same fixture schema and topic namespace, one with
 * AUTH_REQUIRE_API=false loaded without a credential, one with AUTH_REQUIRE_API=true loaded with a
 * valid private key in X-API-Key (SHA-256 + key-table lookup + scope + per-key limiter per request).
 * Loads alternate off/on `rounds` times so drift on a shared machine hits both alike; the table
 * shows every load and the summary compares the mean req/s and the median of the per-load p99s
 * (autocannon reports latency in whole milliseconds). A 2 s warm-up load precedes them on each.
 * With `control`, a third load per round sends the key to the auth-off process (a present credential
 * is checked even with the switch off): the auth cost without the process-to-process difference.
 * Limits are raised so nothing is refused: RATE_LIMIT_MAX 10,000,000 per window for the anonymous
 * process, rate_limit 1,000,000 a minute (the admin endpoint's maximum) for the key.
 */
import autocannon from 'autocannon';
import { newKeyId, newSecret, secretHash } from '../lib/auth/credentials.ts';
import { migrate } from '../lib/db/migrate.ts';
import { createSql } from '../lib/db/pool.ts';
import { extrasOf, roundValue } from '../rules/rounds/round.ts';
import { waitFor } from '../tests/support/poll.ts';
import { freePort, type Service, startService, uniqueId } from '../tests/support/processes.ts';
import { syntheticRound } from '../tests/support/rounds-fixture.ts';
import { type BenchNamespace, benchNamespace, pct } from './auth-support.ts';
import { latencySummary } from './lib.ts';

const PER_GAME = 5_000;

async function fillSchema(ns: BenchNamespace, schema: string): Promise<() => Promise<void>> {
  const sql = createSql({ ...ns.config, db: { ...ns.config.db, schema } }, { max: 2 });
  await migrate(sql, schema);
  const start = Date.UTC(2026, 0, 1);
  const rows = Array.from({ length: PER_GAME * 4 }, (_, i) => {
    const r = syntheticRound(i, Math.floor(i / 4) + 1, start + i * 1000);
    return {
      game_id: r.game_id,
      round_id: r.round_id,
      game_slug: r.game_slug,
      game_type: r.game_type,
      finished_at: new Date(r.finished_at),
      value: roundValue(r.result),
      extras: JSON.stringify(extrasOf(r.result)),
      appended_at: new Date(r.finished_at),
    };
  });
  for (let i = 0; i < rows.length; i += 5_000) await sql`insert into rounds ${sql(rows.slice(i, i + 5_000))}`;
  await sql`update games g set last_round = m.r, last_update = m.t
            from (select game_id, max(round_id) r, max(finished_at) t from rounds group by game_id) m where m.game_id = g.id`;
  await sql`analyze rounds`;
  return async () => {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql.end();
  };
}

/**
 * @returns the per-load rows and the summary rows.
 * @throws Error when a process does not come up, or when any request is refused or fails.
 */
export async function benchRest(opts: {
  seconds: number;
  connections: number;
  rounds: number;
  /** Also load the auth-off process with the key (checked there too): auth cost within one process. */
  control: boolean;
}): Promise<{ loads: Record<string, string | number>[]; summary: Record<string, string | number>[] }> {
  const ns = await benchNamespace('bench-auth-rest-');
  const schema = uniqueId('bench_auth_rest_');
  const dropSchema = await fillSchema(ns, schema);
  const adminKey = newSecret('private');
  const readKey = newSecret('private');
  await ns.addKey({
    key_id: newKeyId(),
    name: 'bench reader',
    kind: 'private',
    secret_sha256: secretHash(readKey),
    scopes: ['read:rounds'],
    rate_limit: 1_000_000,
    allowed_origins: [],
    admin: false,
    visitor_id: null,
    bound_domain: null,
    created_at: Date.now(),
  });
  const procs: Service[] = [];
  try {
    const start = async (requireApi: boolean) => {
      const port = await freePort();
      const svc = startService('services/api/main.ts', {
        ...ns.env,
        DATABASE_SCHEMA: schema,
        API_PORT: String(port),
        RATE_LIMIT_MAX: '10000000',
        // Registered by the first process to start; the second finds it: no generated key is printed.
        AUTH_ADMIN_KEY: adminKey,
        AUTH_REQUIRE_API: String(requireApi),
        LOG_LEVEL: 'warn',
      });
      procs.push(svc);
      return { svc, url: `http://127.0.0.1:${port}/api/latest/crash` };
    };
    const off = await start(false);
    const up = async (p: { svc: Service; url: string }, headers: Record<string, string>) =>
      await waitFor(
        'API ready',
        async () => ((await fetch(p.url, { headers })).ok ? true : undefined),
        60_000,
        200,
      ).catch((err) => {
        throw new Error(`${String(err)}\nAPI output: ${p.svc.output()}`);
      });
    await up(off, {});
    const on = await start(true);
    await up(on, { 'x-api-key': readKey });
    const refused = await fetch(on.url);
    if (refused.status !== 401) throw new Error(`auth-on API answered ${refused.status} without a key`);

    // Warm-up (JIT, connection pools, the key-table lookup) on both, not reported.
    for (const [p, h] of [
      [off, {}],
      [on, { 'x-api-key': readKey }],
    ] as const)
      await autocannon({ url: p.url, connections: opts.connections, duration: 2, headers: h });
    const key = { 'x-api-key': readKey };
    const MODES = {
      off: { what: 'auth off, no credential', url: off.url, headers: {} },
      check: { what: 'auth off process, X-API-Key sk_live_ (checked)', url: off.url, headers: key },
      on: { what: 'AUTH_REQUIRE_API=true, X-API-Key sk_live_', url: on.url, headers: key },
    } as const;
    type Mode = keyof typeof MODES;
    const order: Mode[] = opts.control ? ['off', 'check', 'on'] : ['off', 'on'];
    const loads: Record<string, string | number>[] = [];
    const p99: Record<Mode, number[]> = { off: [], check: [], on: [] };
    const rps: Record<Mode, number[]> = { off: [], check: [], on: [] };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const mode of order) {
        const m = MODES[mode];
        const res = await autocannon({
          url: m.url,
          connections: opts.connections,
          duration: opts.seconds,
          pipelining: 1,
          headers: m.headers,
        });
        const bad = res.errors + res.non2xx + res.timeouts;
        if (bad > 0) throw new Error(`${m.what}: ${bad} failed or refused requests`);
        p99[mode].push(res.latency.p99);
        rps[mode].push(res.requests.average);
        loads.push({
          load: `${r}/${opts.rounds}`,
          what: m.what,
          'req/s': Math.round(res.requests.average),
          'p50 ms': res.latency.p50,
          'p99 ms': res.latency.p99,
          requests: res.requests.total,
          errors: bad,
        });
      }
    }
    const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
    // Nearest rank: with an even number of loads, the lower of the two middle p99s.
    const med = (v: number[]) => latencySummary(v).p50;
    const summary: Record<string, string | number>[] = order.map((mode) => ({
      what: MODES[mode].what,
      'mean req/s': Math.round(mean(rps[mode])),
      'median p99 ms': med(p99[mode]),
    }));
    for (const mode of order.slice(1))
      summary.push({
        what: `change, ${mode === 'on' ? 'AUTH_REQUIRE_API=true' : 'key checked, same process'} vs off (+ = more)`,
        'mean req/s': pct(mean(rps[mode]), mean(rps.off)),
        'median p99 ms': pct(med(p99[mode]), med(p99.off)),
      });
    return { loads, summary };
  } finally {
    for (const p of procs) await p.stop('SIGTERM');
    await dropSchema();
    await ns.close();
  }
}
