import { describe, expect, it } from 'vitest';
import { AppError, UnavailableError } from '../../lib/errors.ts';
import { InvalidInputError, NotFoundError, RateLimitedError, replyForError } from './errors.ts';

describe('replyForError', () => {
  it.each([
    ['invalid input', new InvalidInputError('X', 'Invalid game slug'), 400, 'Invalid game slug'],
    ['not found', new NotFoundError('X', 'Game not found'), 404, 'Game not found'],
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
