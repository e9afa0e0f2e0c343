/**
 * The API contract, checked by an independent fuzzer (finding 9): schemathesis
 * (PyPI, in the project's .cache/schemathesis-venv, installed by scripts/ensure-test-tools.sh, which
 * `npm test` runs) against /openapi.json of a running API, with every check on (`--checks all`: no
 * 5xx, only documented statuses and content types, bodies matching their schemas, schema-valid input
 * accepted and invalid input refused, auth not ignored, use after free…) over the examples,
 * coverage, fuzzing and stateful phases. Credentials for each security scheme: an admin key with
 * every scope, an operator bearer and a demo player's bearer, made by this test. Destructive admin
 * operations touch only keys and operators the run created itself (tests/contract/st_hooks.py);
 * afterwards the test's own admin key and operator must still work.
 *
 * The stack: the API, the round engine (so rounds open and finish: bets, the current round), the
 * projector (read models) and the operator sandbox as the test operator's wallet (its readiness
 * probe must pass, or every real-money session is 503 OPERATOR_NOT_READY), as
 * processes on free ports in a namespace and schemas of their own.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '../../lib/db/pool.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { ensureTopics } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { type Config, loadConfig } from '../support/config.ts';
import { freePort, ROOT, type Service, startService, waitReady } from '../support/processes.ts';

const ST = join(ROOT, '.cache', 'schemathesis-venv', 'bin', 'st');
/** Examples per operation and phase: about 5,000 cases in all, a few minutes on two cores. */
const MAX_EXAMPLES = 100;

let config: Config;
let env: Record<string, string> = {};
let base = '';
let tmp = '';
const services: Service[] = [];
const admin = `sk_live_${randomBytes(32).toString('hex')}`;
const creds = { key: '', operator: '', operatorId: '', player: '' };
const id = randomBytes(4).toString('hex');

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  if (!existsSync(ST)) throw new Error(`${ST} missing: run bash scripts/ensure-test-tools.sh`);
  tmp = mkdtempSync(join(tmpdir(), 'contract-'));
  const [api, engine, sandbox] = [await freePort(), await freePort(), await freePort()];
  env = {
    TOPIC_NAMESPACE: `t-contract-${id}-`,
    DATABASE_SCHEMA: `t_contract_${id}`,
    PROJECTOR_GROUP: `t-contract-${id}-projector`,
    PROJECTOR_PORT: '0',
    API_PORT: String(api),
    ROUND_ENGINE_PORT: String(engine),
    API_ENGINE_URL: `http://127.0.0.1:${engine}`,
    AUTH_ADMIN_KEY: admin,
    AUTH_TOKEN_SECRET: randomBytes(32).toString('hex'),
    ROUND_SPEED: '20',
    ROUND_CHAIN_LENGTH: '1000',
    ROUND_SERVER_SEED: 'c0'.repeat(32),
    // One external game, so the publisher API has a game a key may be bound to (the engine runs the others).
    GAMES_EXTERNAL: 'wall-street',
    // The fuzzer is one client sending thousands of requests, many with bad credentials on purpose.
    RATE_LIMIT_MAX: '10000000',
    RATE_LIMIT_AUTH_FAILURES: '1000000',
    RATE_LIMIT_BROWSER_KEYS_PER_IP: '1000000',
    RATE_LIMIT_BROWSER_KEYS_PER_DOMAIN: '10000000',
    LOG_LEVEL: 'warn',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
  };
  config = loadConfig({ ...process.env, ...env });
  const kafka = createKafka(config, `contract-${id}`, createLogger('test', 'error'));
  const setup = kafka.admin();
  await setup.connect();
  await ensureTopics(setup, config);
  await setup.disconnect();
  services.push(startService('services/api/main.ts', env));
  services.push(startService('services/round-engine/main.ts', env));
  services.push(startService('services/projector/main.ts', env));
  base = `http://127.0.0.1:${api}`;
  await waitReady(`${base}/ready`, 90_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${services.map((s) => s.output().slice(-3000)).join('\n')}`);
  });

  // The credentials of the three security schemes.
  const all = (await call('GET', '/api/auth/scopes', {})).body.scopes as { name: string }[];
  const key = await call(
    'POST',
    '/api/auth/keys',
    { 'x-api-key': admin },
    {
      name: 'schemathesis',
      // Every scope; of the publisher bindings, only the external game's (one of the engine's is refused).
      scopes: all
        .map((s) => s.name)
        .filter((n) => !n.startsWith('publish:rounds:') || n === 'publish:rounds:wall-street'),
      // The fuzzer sends thousands of requests a minute with this key (the default is 1,000).
      rate_limit: 1_000_000,
    },
  );
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  creds.key = key.body.secret as string;
  const op = await call(
    'POST',
    '/admin/operators',
    { 'x-api-key': admin },
    {
      name: 'contract',
      callback_form: 'A',
      base_url: `http://127.0.0.1:${sandbox}`,
    },
  );
  creds.operator = op.body.api_token as string;
  creds.operatorId = op.body.operator_id as string;
  // Its wallet: the sandbox, signing with the secret the API just made; then probed again.
  services.push(
    startService('services/operator-sandbox/main.ts', {
      ...env,
      SANDBOX_PORT: String(sandbox),
      SANDBOX_SIGNING_SECRET: op.body.signing_secret as string,
      SANDBOX_DB_SCHEMA: `t_contract_sbx_${id}`,
    }),
  );
  await waitReady(`http://127.0.0.1:${sandbox}/ready`, 60_000);
  const probe = await call('POST', `/admin/operators/${creds.operatorId}/probe`, { 'x-api-key': admin });
  if ((probe.body.readiness as { ready?: boolean } | undefined)?.ready !== true)
    throw new Error(`the test operator is not ready: ${JSON.stringify(probe.body)}`);
  const access = await call(
    'POST',
    '/games/request-access',
    { authorization: `Bearer ${creds.operator}` },
    {
      game: 'crash',
      user_id: 'fuzzer',
      username: 'Fuzzer',
      demo: true,
    },
  );
  const launch = new URL(access.body.game_url as string).searchParams.get('launch');
  creds.player = (await call('POST', '/play/open', {}, { launch })).body.player_token as string;
  if (!creds.player) throw new Error(`no player token: ${JSON.stringify(access.body)}`);
}, 180_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop('SIGTERM')));
  if (!config) return;
  const sql = createSql(config, { max: 1 });
  await sql.unsafe(`drop schema if exists "${config.db.schema}" cascade`).catch(() => {});
  await sql.unsafe(`drop schema if exists "t_contract_sbx_${id}" cascade`).catch(() => {});
  await sql.end({ timeout: 5 });
  const kafka = createKafka(config, 'contract-cleanup', createLogger('test', 'error'));
  const admin = kafka.admin();
  await admin.connect();
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(config.kafka.topicNamespace));
  if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => {});
  await admin.disconnect();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** schemathesis' default statuses for schema-valid input (config/_checks.py). */
const POSITIVE = ['2xx', '3xx', '401', '403', '404', '409', '429', '5xx'];
/**
 * Operations with a rule relative to the clock or across fields, which JSON Schema (OpenAPI 3.0)
 * cannot state: free bets must expire in the future; an operator's retry policy needs
 * maxTimeoutMs ≥ minTimeoutMs (on create and change); an amount may have at most its currency's
 * exponent of decimals (USD 2, JPY 0, BTC 8), the currency being another field; a
 * callback range's `to` may not be before its `from`, and a re-drive names its callbacks one way.
 */
const SEMANTIC_RULES: readonly [string, string][] = [
  ['POST', '/games/free-bets'],
  ['POST', '/admin/operators'],
  ['PATCH', '/admin/operators/{id}'],
  ['GET', '/admin/wallet/callbacks'],
  ['POST', '/admin/wallet/callbacks/redrive'],
  ['POST', '/games/request-access'],
  // The selection's shape depends on the session's game, the amount's precision on its currency.
  ['POST', '/play/bets'],
];

/** The schemathesis configuration: credentials per security scheme, the hooks, every check. */
function configFile(): string {
  const file = join(tmp, 'schemathesis.toml');
  writeFileSync(
    file,
    [
      `hooks = "st_hooks"`,
      `[generation]`,
      `max-examples = ${MAX_EXAMPLES}`,
      // Bodies are JSON, which is UTF-8 text (RFC 8259 §8.1): no lone surrogates (refused all the same).
      `codec = "utf-8"`,
      `[checks]`,
      `enabled = true`,
      `[auth.openapi.apiKey]`,
      `api_key = "${creds.key}"`,
      `[auth.openapi.operatorBearer]`,
      `bearer = "${creds.operator}"`,
      `[auth.openapi.playerBearer]`,
      `bearer = "${creds.player}"`,
      // Rules no JSON schema can state, documented in the operations' descriptions: a 400 for them
      // is the contract too. Everything else schema-valid must be accepted.
      ...SEMANTIC_RULES.map(
        ([m, p]) => [m, p, 'positive_data_acceptance', [...POSITIVE, '400']] as const,
      ).flatMap(([method, path, check, statuses]) => [
        `[[operations]]`,
        `include-method = "${method}"`,
        `include-path = "${path}"`,
        `checks.${check}.expected-statuses = [${statuses.map((x) => `"${x}"`).join(', ')}]`,
      ]),
      '',
    ].join('\n'),
  );
  return file;
}

describe('the API contract (/openapi.json) under schemathesis', () => {
  it('holds for every generated case: no 5xx, no undocumented status, every response matching its schema', async () => {
    const args = [
      '--config-file',
      configFile(),
      'run',
      `${base}/openapi.json`,
      '--checks',
      'all',
      '--phases',
      'examples,coverage,fuzzing,stateful',
      '--workers',
      '1',
      '--max-failures',
      '20',
      // The run's seed is printed with its summary; CONTRACT_SEED=<seed> generates the same cases again.
      ...(process.env.CONTRACT_SEED ? ['--seed', process.env.CONTRACT_SEED] : []),
    ];
    const { code, out } = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        ST,
        args,
        {
          cwd: tmp,
          env: { ...process.env, PYTHONPATH: join(ROOT, 'tests', 'contract'), NO_COLOR: '1' },
          maxBuffer: 64 * 1024 * 1024,
          timeout: 600_000,
        },
        (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
      );
    });
    const cases = /(\d+) generated/.exec(out)?.[1];
    // Its summary without the '=====' banners: "=== 2 warnings in 64.6s ===" has the shape of a pytest
    // closing line, and a reader of closing lines would take it for the run's (scripts/test-summary.ts).
    const summary = out
      .slice(out.indexOf('SUMMARY') - 40)
      .split('\n')
      .filter((line) => !/^=+( .* =+)?\s*$/.test(line.trim()))
      .join('\n');
    console.log(`schemathesis: ${cases ?? '?'} cases generated\n${summary}`);
    expect(code, out.slice(-20_000)).toBe(0);
    expect(Number(cases)).toBeGreaterThan(1000);
    // What the run did not create is intact: the test's admin key and operator still work.
    for (const [path, headers] of [
      ['/api/auth/keys', { 'x-api-key': admin }],
      ['/api/auth/keys', { 'x-api-key': creds.key }],
      ['/games', { authorization: `Bearer ${creds.operator}` }],
    ] as const) {
      const r = await call('GET', path, headers);
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
    }
  }, 660_000);
});
