import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import type { FastifyError } from 'fastify';
import { describe, expect, it } from 'vitest';
import { MALFORMED_URL_TEXT, SEED_CORS_HEADERS } from '../../lib/http/error-form.ts';
import { httpReplyForError, httpStatusOf } from './errors.ts';

const grpcError = (code: status, details: string): ServiceError =>
  Object.assign(new Error(`${code} ${status[code]}: ${details}`), {
    code,
    details,
    metadata: new Metadata(),
  });

const fastifyError = (code: string, statusCode?: number, message = 'x'): FastifyError =>
  Object.assign(new Error(message), { code, statusCode, name: 'FastifyError' }) as FastifyError;

describe('httpReplyForError (the edge HTTP server: one mapping)', () => {
  it('a refused credential of the gRPC proxy: the standard text, its reason and Retry-After', () => {
    expect(
      httpReplyForError(
        grpcError(status.RESOURCE_EXHAUSTED, 'Too Many Requests: slow down, retry after 7 s (budget)'),
      ),
    ).toEqual({
      status: 429,
      headers: { 'Access-Control-Allow-Origin': '*', 'Retry-After': '7' },
      body: { error: 'Too many requests, please slow down', success: false, reason: 'budget' },
    });
    expect(
      httpReplyForError(grpcError(status.UNAUTHENTICATED, 'Unauthorized: no key (missing)')).body,
    ).toEqual({
      error: 'Unauthorized',
      success: false,
      reason: 'missing',
    });
  });

  it("the gRPC server's 400/404 texts go through; any other gRPC status is 502 naming only the status", () => {
    expect(httpReplyForError(grpcError(status.NOT_FOUND, 'Game not found'))).toEqual({
      status: 404,
      headers: { 'Access-Control-Allow-Origin': '*' },
      body: { error: 'Game not found', success: false },
    });
    expect(httpReplyForError(grpcError(status.INTERNAL, 'secret detail')).body).toEqual({
      error: 'Bad Gateway (gRPC INTERNAL)',
      success: false,
    });
    expect(httpStatusOf(status.PERMISSION_DENIED)).toBe(403);
    expect(httpStatusOf(status.UNAVAILABLE)).toBe(502);
  });

  it("fastify's errors: its 4xx status and message, a malformed URL 400, anything else 500, with CORS", () => {
    expect(httpReplyForError(fastifyError('FST_ERR_BAD_URL', 400))).toEqual({
      status: 400,
      headers: SEED_CORS_HEADERS,
      body: { error: MALFORMED_URL_TEXT, success: false },
    });
    expect(
      httpReplyForError(fastifyError('FST_ERR_CTP_BODY_TOO_LARGE', 413, 'Request body is too large')).status,
    ).toBe(413);
    expect(httpReplyForError(new Error('boom'))).toEqual({
      status: 500,
      headers: SEED_CORS_HEADERS,
      body: { error: 'Internal Server Error', success: false },
    });
  });
});
