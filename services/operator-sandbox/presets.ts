/**
 * How the sandbox answers as an operator of each answer preset (the presets are
 * rules/wallet/answers.ts's, which reads what this writes). Pure: a success, a replay or an error
 * code in, an HTTP status and body out.
 *
 * | answer | `http-status` (default) | `seed` | `status-in-body` (strict) |
 * |---|---|---|---|
 * | success | 200 fields | 200 fields | 200 `{status: "RS_OK", …fields}` |
 * | the same callback again | 200 the first answer | 200 the first answer | 200 `{status: "RS_ERROR_DUPLICATE_TRANSACTION", …first answer}` |
 * | refusal (insufficient funds, bet rolled back or settled, no such bet, id reused with another body) | 402 or 409 `{error: {code, message}}` | 200 `{error: {code, message}}` | 200 `{status, message}` |
 * | malformed body | 400 `{error}` | 200 `{error}` | 200 `{status: "RS_ERROR_WRONG_SYNTAX", message}` |
 * | bad signature | 401 `{error}` | 401 `{error}` | 401 `{status: "RS_ERROR_INVALID_SIGNATURE", message}` |
 * | no such route | 404 | 404 | 404 |
 * | the sandbox's own failure, an injected fault | 500 (503 database down) | 500 | 500 (503) |
 *
 * `seed` answers only with the statuses docs/contract.md "Operator callbacks" lists (200, 401, 404, 500): 401, 404 and 500 keep
 * the seed's meanings (not authorised, no route, the operator failed), so a refusal, which is an
 * answer and not a failure, is a 200 whose body names an error code and carries no operator_tx_id.
 * A refusal under `status-in-body` carries no operator_tx_id either; its status is Hub88's where
 * Hub88 has one, else the code itself (answers.ts reads both). A signature failure stays an HTTP 401
 * under every preset: it is refused before any wallet logic, and the conformance kit expects it.
 */
import type { AnswerPreset } from '../../rules/wallet/answers.ts';

/** An answer as sent: HTTP status and JSON body. */
export interface SandboxAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** The error body of `http-status` and `seed` (the issue-5 contract's). */
export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/** `status` of a success and of a replay under `status-in-body`. */
export const RS_OK = 'RS_OK';
export const RS_DUPLICATE = 'RS_ERROR_DUPLICATE_TRANSACTION';

/** The `status` of each sandbox code under `status-in-body`: Hub88's RS_* where one exists. */
const IN_BODY: Readonly<Record<string, string>> = {
  INSUFFICIENT_FUNDS: 'RS_ERROR_NOT_ENOUGH_MONEY',
  BET_NOT_FOUND: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST',
  INVALID_SIGNATURE: 'RS_ERROR_INVALID_SIGNATURE',
  BAD_REQUEST: 'RS_ERROR_WRONG_SYNTAX',
};
const RS_UNKNOWN = 'RS_ERROR_UNKNOWN';

/** The code as a `status-in-body` status. */
export function inBodyStatus(code: string): string {
  return IN_BODY[code] ?? code;
}

/** Statuses every preset keeps as HTTP statuses: not authorised, no route, the operator failed. */
const isTransport = (status: number) => status === 401 || status === 404 || status >= 500;

/** The answer to a callback that was applied (`replay`: its first answer, stored, sent again). */
export function okAnswer(
  preset: AnswerPreset,
  fields: Readonly<Record<string, string>>,
  replay: boolean,
): SandboxAnswer {
  if (preset !== 'status-in-body') return { status: 200, body: { ...fields } };
  return { status: 200, body: { status: replay ? RS_DUPLICATE : RS_OK, ...fields } };
}

/**
 * The answer to a callback refused or failed with `code`, whose HTTP status under `http-status`
 * is `httpStatus` (errors.ts STATUS_OF for the sandbox's own codes).
 */
export function errorAnswer(
  preset: AnswerPreset,
  code: string,
  message: string,
  httpStatus: number,
): SandboxAnswer {
  const error = errorBody(code, message);
  if (preset === 'http-status') return { status: httpStatus, body: error };
  const transport = isTransport(httpStatus);
  if (preset === 'seed') return { status: transport ? Math.min(httpStatus, 500) : 200, body: error };
  if (!transport) return { status: 200, body: { status: inBodyStatus(code), message } };
  const status = httpStatus === 401 ? inBodyStatus(code) : RS_UNKNOWN;
  return { status: httpStatus, body: { status, message } };
}
