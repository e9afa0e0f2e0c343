import { describe, expect, it } from 'vitest';
import { originAllowed } from '../../../lib/auth/origins.ts';
import { checkBrowserKeyInput, deriveBrowserKey } from './browser-key.ts';

const SECRET = Buffer.alloc(32, 7);

describe('browser keys', () => {
  it.each(['example.com', 'Shop.Example.COM', '127.0.0.1:8080', 'localhost', 'a-b.c'])('accepts %s', (d) => {
    expect(checkBrowserKeyInput('v', d).ok).toBe(true);
  });

  it.each([
    '',
    'https://example.com',
    'example.com/',
    '-a.com',
    'a-.com',
    'a..com',
    'a_b.com',
    'host:0',
    'host:70000',
    'x'.repeat(129),
  ])('rejects %s', (d) => {
    expect(checkBrowserKeyInput('v', d).ok).toBe(false);
  });

  it('derives the same key for the same pair and another for another pair', () => {
    const a = deriveBrowserKey(SECRET, 'v1', 'example.com');
    expect(deriveBrowserKey(SECRET, 'v1', 'example.com')).toEqual(a);
    expect(deriveBrowserKey(SECRET, 'v2', 'example.com').secret).not.toBe(a.secret);
    expect(deriveBrowserKey(Buffer.alloc(32, 8), 'v1', 'example.com').secret).not.toBe(a.secret);
    expect(a.keyId).toMatch(/^key_[0-9a-f]{16}$/);
    expect(a.secret).toMatch(/^pk_live_[0-9a-f]{64}$/);
  });

  it('binds the origins of the domain, port included', () => {
    const { allowedOrigins } = deriveBrowserKey(SECRET, 'v', '127.0.0.1:8080');
    expect(originAllowed('http://127.0.0.1:8080', allowedOrigins)).toBe(true);
    expect(originAllowed('http://127.0.0.1', allowedOrigins)).toBe(false);
  });
});
