import { describe, expect, it } from 'vitest';
import { AppError, UnavailableError } from '../../lib/errors.ts';
import {
  type ApiErrorCode,
  AuthError,
  BadGatewayError,
  ConflictError,
  GoneError,
  InsufficientFundsError,
  InvalidInputError,
  NotFoundError,
  problemForError,
  RateLimitedError,
  replyForError,
} from './errors.ts';

describe('replyForError', () => {
  it.each([
    [
      'invalid input',
      new InvalidInputError('INVALID_GAME_SLUG', 'Invalid game slug'),
      400,
      'Invalid game slug',
    ],
    ['not found', new NotFoundError('GAME_NOT_FOUND', 'Game not found'), 404, 'Game not found'],
    ['rate limited', new RateLimitedError(30), 429, 'Too many requests, please slow down'],
    ['unavailable dependency', new UnavailableError('db down'), 503, 'Service Unavailable'],
    [
      'postgres connection refused',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      503,
      'Service Unavailable',
    ],
    [
      'postgres admin shutdown',
      Object.assign(new Error('terminating'), { code: '57P01' }),
      503,
      'Service Unavailable',
    ],
    [
      'schema validation',
      Object.assign(new Error('querystring/x must be integer'), { validation: [{}], statusCode: 400 }),
      400,
      'querystring/x must be integer',
    ],
    [
      'fastify client error',
      Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }),
      415,
      'Unsupported Media Type',
    ],
    ['a bug', new TypeError('x is undefined'), 500, 'Internal Server Error'],
    [
      'a bad SQL query',
      Object.assign(new Error('syntax error'), { code: '42601' }),
      500,
      'Internal Server Error',
    ],
    ['another app error', new AppError('SOMETHING', 'secret detail'), 500, 'Internal Server Error'],
    ['a thrown string', 'boom', 500, 'Internal Server Error'],
    [
      'a 5xx status from elsewhere',
      Object.assign(new Error('upstream detail'), { statusCode: 502 }),
      500,
      'Internal Server Error',
    ],
  ])('maps %s to %i', (_case, err, status, text) => {
    expect(replyForError(err)).toEqual({ status, body: { error: text, success: false } });
  });
});

describe('problemForError (session API, RFC 7807)', () => {
  it.each([
    [new GoneError('LAUNCH_USED', 'used'), 410, 'Gone', 'urn:casino:problem:launch-used', 'used'],
    [
      new InsufficientFundsError('short'),
      402,
      'Payment Required',
      'urn:casino:problem:insufficient-funds',
      'short',
    ],
    [new BadGatewayError('down'), 502, 'Bad Gateway', 'about:blank', 'down'],
    [
      new AuthError(401, 'missing', 'a bearer is required'),
      401,
      'Unauthorized',
      'urn:casino:problem:unauthorized',
      'a bearer is required',
    ],
    [new Error('boom'), 500, 'Internal Server Error', 'about:blank', 'Internal Server Error'],
  ])('%s → %i', (err, status, title, type, detail) => {
    const p = problemForError(err);
    expect(p.status).toBe(status);
    expect(p.body).toMatchObject({ status, title, type, detail });
  });
});

describe('error codes (closed per class)', () => {
  it('an unlisted code does not compile (tsc); listed codes keep their answers', () => {
    // @ts-expect-error NOT_A_CODE is not an InvalidInputCode: tsc refuses it
    const unlisted = new InvalidInputError('NOT_A_CODE', 'bad');
    expect(replyForError(unlisted).status).toBe(400);
    // @ts-expect-error a 404 code is not a ConflictCode
    expect(new ConflictError('GAME_NOT_FOUND', 'x').code).toBe('GAME_NOT_FOUND');
    const code: ApiErrorCode = new ConflictError('ROUND_CONFLICT', 'other data').code;
    expect(problemForError(new ConflictError(code, 'other data')).body.type).toBe(
      'urn:casino:problem:round-conflict',
    );
  });
});
