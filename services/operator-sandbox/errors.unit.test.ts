import { describe, expect, it } from 'vitest';
import { errorOf, SandboxError } from './errors.ts';

describe('errorOf (the sandbox: one mapping)', () => {
  it("answers the admin routes' own codes too, by the same table as the callback refusals", () => {
    expect(errorOf(new SandboxError('ACCOUNT_NOT_FOUND', 'no account u in USD'))).toEqual({
      code: 'ACCOUNT_NOT_FOUND',
      message: 'no account u in USD',
      status: 404,
    });
    expect(errorOf(new SandboxError('NOT_FOUND', 'no route GET /x')).status).toBe(404);
    expect(errorOf(new SandboxError('BET_SETTLED', 'settled')).status).toBe(409);
    expect(errorOf(new Error('boom'))).toEqual({ code: 'INTERNAL', message: 'internal error', status: 500 });
  });
});
