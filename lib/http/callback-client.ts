/**
 * Sends one signed callback attempt. Uses node:http(s) rather than fetch because form B is a GET
 * with a JSON body, which fetch (undici) refuses. Signed with Standard Webhooks (npm
 * `standardwebhooks`, https://www.standardwebhooks.com): webhook-id (the same on every retry),
 * webhook-timestamp (Unix s of this attempt), webhook-signature `v1,<base64 HMAC-SHA256>` over
 * `id.timestamp.body`.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import { type Answer, type AnswerTable, classifyAnswer, timedOut } from '../../rules/wallet/answers.ts';
import type { CallbackKind, CallbackRequest } from '../../rules/wallet/bodies.ts';

/**
 * What one attempt got: an HTTP answer (status and body text), no answer within the timeout, or
 * no exchange at all (connection refused or reset, request not signable). How an answer counts is
 * rules/wallet/answers.ts's, per operator.
 */
export type Exchange =
  | { readonly type: 'answer'; readonly status: number; readonly text: string }
  | { readonly type: 'timeout'; readonly timeoutMs: number }
  | { readonly type: 'error'; readonly reason: string };

/**
 * How the reason of an exchange that left but got no answer (connection refused or reset) starts:
 * `connection error: <code>`. A request that could not be signed never left; its reason starts
 * with `cannot sign:` instead. Ops figures tell the two apart by it (lib/db/wallet-callbacks.ts).
 */
export const CONNECTION_ERROR_PREFIX = 'connection error: ';

/** An exchange with the headers it was sent with (content-type and the webhook-* headers). */
export type SentExchange = Exchange & { readonly headers: Readonly<Record<string, string>> };

/**
 * The secrets a request is signed with: one, several (a signing-secret rotation's overlap: each
 * gives one signature), or null for no signature.
 */
export type SigningSecrets = string | readonly string[] | null;

/** Keep-alive agents shared by every attempt of one saga. */
export interface CallbackClient {
  /**
   * Signs `req` with `secret` (each of them, when several) at `nowMs` and sends it; a null
   * `secret` sends it with no webhook-* header (the conformance kit's unsigned request).
   * @returns the exchange and the headers sent. Never throws: a timeout (whole exchange longer
   *   than `timeoutMs`) and a connection error are results.
   */
  send(req: CallbackRequest, secret: SigningSecrets, timeoutMs: number, nowMs: number): Promise<SentExchange>;
  close(): void;
}

/**
 * The Standard Webhooks headers of `body` signed at `nowMs` (Unix ms; the timestamp is its whole
 * seconds) with `secret` (`whsec_…`), or with each of `secret` when several: webhook-signature is
 * then the space-delimited list `v1,<sig1> v1,<sig2>` in the order given, which a Standard
 * Webhooks verifier accepts when any one matches its secret (a rotation's overlap).
 * @throws Error (the library's) for a malformed secret, or when `secret` is an empty list.
 */
export function signHeaders(
  webhookId: string,
  body: string,
  secret: string | readonly string[],
  nowMs: number,
): Record<string, string> {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new Error('no signing secret');
  const at = new Date(Math.floor(nowMs / 1000) * 1000);
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(nowMs / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(webhookId, at, body)).join(' '),
  };
}

/** A callback client with keep-alive connection pools (`maxSockets` per operator origin). */
export function createCallbackClient(maxSockets = 64): CallbackClient {
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, maxSockets }),
    'https:': new HttpsAgent({ keepAlive: true, maxSockets }),
  };
  return {
    async send(req, secret, timeoutMs, nowMs) {
      const body = JSON.stringify(req.body);
      let headers: Record<string, string>;
      try {
        headers = {
          'content-type': 'application/json',
          ...(secret === null ? {} : signHeaders(req.webhookId, body, secret, nowMs)),
        };
      } catch (err) {
        return {
          type: 'error',
          reason: `cannot sign: ${(err as Error).message}`,
          headers: { 'content-type': 'application/json' },
        };
      }
      const url = new URL(req.url);
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const agent = url.protocol === 'https:' ? agents['https:'] : agents['http:'];
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const r = send(
            url,
            {
              method: req.method,
              agent,
              signal,
              headers: { ...headers, 'content-length': Buffer.byteLength(body) },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
              );
              res.on('error', reject);
            },
          );
          r.on('error', reject);
          r.end(body);
        });
        return { type: 'answer', status, text, headers };
      } catch (err) {
        if (signal.aborted) return { type: 'timeout', timeoutMs, headers };
        const e = err as NodeJS.ErrnoException;
        return { type: 'error', reason: `${CONNECTION_ERROR_PREFIX}${e.code ?? e.message}`, headers };
      }
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

/**
 * How `ex`, the exchange of `req`, counts under the operator's answer table (rules/wallet/answers.ts):
 * a timeout is `failed/TIMEOUT`, a connection error `failed/OPERATOR_ERROR`.
 */
export function answerOf(
  ex: Exchange,
  table: AnswerTable,
  req: CallbackRequest & { kind: CallbackKind },
): Answer {
  if (ex.type === 'timeout') return timedOut(ex.timeoutMs);
  if (ex.type === 'error') return { class: 'failed', code: 'OPERATOR_ERROR', reason: ex.reason };
  const echoes = req.method === 'GET' || req.body.action === 'rollback';
  return classifyAnswer(table, { kind: req.kind, echoes, body: req.body }, ex.status, ex.text);
}
