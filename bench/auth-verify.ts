/**
 * Credential verification per second on one core: each case runs alone in a
 * tight loop on this thread for `seconds`, cycling through pre-built inputs, beside two baselines
 * in the same run: a bare HMAC-SHA256 of the token's 17-byte payload and a bare SHA-256 of a key
 * secret (node:crypto), the primitives the real checks are built on. Every result is checked
 * (a failed verification aborts), so nothing is optimised away.
 * Reported: operations per wall-clock second and per CPU second of this process (the machine may
 * be shared; the CPU figure is what one core does when it gets the whole core), and µs per op.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { newKeyId, newSecret, secretHash } from '../lib/auth/credentials.ts';
import { MemoryKeyTable } from '../lib/auth/key-table.ts';
import { issueToken, verifyToken } from '../lib/auth/tokens.ts';
import { authenticate } from '../lib/auth/verifier.ts';

interface Case {
  readonly what: string;
  /** Runs operation `i`; returns false when it failed (which aborts the benchmark). */
  readonly op: (i: number) => boolean;
}

function timeLoop(c: Case, seconds: number): Record<string, string | number> {
  for (let i = 0; i < 20_000; i++) if (!c.op(i)) throw new Error(`${c.what}: failed during warm-up`);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const limit = t0 + BigInt(Math.round(seconds * 1e9));
  let n = 0;
  let now = t0;
  while (now < limit) {
    for (let j = 0; j < 1024; j++, n++) if (!c.op(n)) throw new Error(`${c.what}: failed at op ${n}`);
    now = process.hrtime.bigint();
  }
  const wallS = Number(now - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  return {
    what: c.what,
    ops: n,
    'ops/s (wall)': Math.round(n / wallS),
    'ops/s (CPU)': Math.round(n / cpuS),
    'µs/op (CPU)': ((cpuS / n) * 1e6).toFixed(2),
    'CPU share': `${Math.round((cpuS / wallS) * 100)} %`,
  };
}

/**
 * @param seconds duration of each case's timed loop.
 * @returns one table row per case.
 */
export function benchVerify(seconds: number): Record<string, string | number>[] {
  const secret = randomBytes(32);
  const table = new MemoryKeyTable(secret);
  const keyId = newKeyId();
  const apiKey = newSecret('private');
  table.apply({
    type: 'KeyCreated',
    value: {
      key_id: keyId,
      name: 'bench',
      kind: 'private',
      secret_sha256: secretHash(apiKey),
      scopes: ['read:rounds', 'stream:*'],
      rate_limit: 1000,
      allowed_origins: [],
      admin: false,
      visitor_id: null,
      bound_domain: null,
      created_at: 0,
    },
  });
  // Distinct tokens (one per ms of issue time) so no cache or branch predictor sees one input;
  // `now` is fixed inside their lifetime (verification is pure: the time is an argument).
  const N = 4096;
  const now = Date.UTC(2026, 0, 1);
  const tokens = Array.from({ length: N }, (_, i) => issueToken(secret, keyId, now - i).token);
  const bodies = tokens.map((t) => Buffer.from(t.slice(4, 4 + 34), 'hex'));
  const m = N - 1;

  const cases: Case[] = [
    {
      what: 'baseline: HMAC-SHA256 of the 17-byte token payload',
      op: (i) =>
        createHmac('sha256', secret)
          .update(bodies[i & m] as Buffer)
          .digest().length === 32,
    },
    {
      what: 'verifyToken (hex parse, HMAC, constant-time compare, expiry)',
      op: (i) => verifyToken(secret, tokens[i & m] as string, now).ok,
    },
    {
      what: 'authenticate(tok_…) + table lookup + scope',
      op: (i) => authenticate(table, { credential: tokens[i & m], now, scope: 'read:rounds' }).ok,
    },
    {
      what: 'baseline: SHA-256 of the 72-char sk_live_ secret, as hex',
      // What secretHash does; the same secret as the authenticate case below.
      op: () => createHash('sha256').update(apiKey, 'utf8').digest('hex').length === 64,
    },
    {
      what: 'authenticate(sk_live_…) (SHA-256 + table lookup + scope)',
      op: () => authenticate(table, { credential: apiKey, now, scope: 'read:rounds' }).ok,
    },
  ];
  return cases.map((c) => timeLoop(c, seconds));
}
