/**
 * RATE_LIMIT_REDIS_URL validation (services/api/config.ts) and the store's key namespace: a malformed URL
 * stops the process with a message naming the setting, instead of an API that silently limits
 * per process.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/errors.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { storeNamespace } from './rate-limit.ts';

describe('RATE_LIMIT_REDIS_URL', () => {
  it('is empty by default: per-process counters', () => {
    expect(loadConfig({}).api.rateLimitRedisUrl).toBe('');
  });

  it.each([
    'redis://127.0.0.1:56379',
    'redis://cache.internal:6379/2',
    'rediss://:secret@cache.example.com:6380',
    'redis://user:secret@10.0.0.5:6379/0',
    'redis://[::1]:6379',
  ])('accepts %s', (url) => {
    expect(loadConfig({}, { RATE_LIMIT_REDIS_URL: url }).api.rateLimitRedisUrl).toBe(url);
  });

  it.each([
    ['no port', 'redis://127.0.0.1'],
    ['another scheme', 'http://127.0.0.1:6379'],
    ['no scheme', '127.0.0.1:6379'],
    ['a non-numeric database', 'redis://127.0.0.1:6379/x'],
    ['a path', 'redis://127.0.0.1:6379/0/extra'],
    ['white space', 'redis://127.0.0.1 :6379'],
  ])('refuses %s (%s)', (_case, url) => {
    expect(() => loadConfig({}, { RATE_LIMIT_REDIS_URL: url })).toThrow(ConfigError);
    expect(() => loadConfig({}, { RATE_LIMIT_REDIS_URL: url })).toThrow(/RATE_LIMIT_REDIS_URL: redis:\/\//);
  });
});

describe('storeNamespace', () => {
  it('prefixes the keys with TOPIC_NAMESPACE, so tenants and test runs sharing a Redis stay apart', () => {
    expect(storeNamespace(loadConfig({}))).toBe('rate-limit:');
    expect(storeNamespace(loadConfig({}, { TOPIC_NAMESPACE: 't-ab12-' }))).toBe('t-ab12-rate-limit:');
  });
});
