import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { ConfigError } from './errors.ts';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c.kafka.brokers).toEqual(['127.0.0.1:19092']);
    expect(c.api.rateLimitMax).toBe(100);
    expect(c.api.rateLimitWindowMs).toBe(60_000);
    expect(c.engine.games).toEqual(['crash', 'double', 'slot', 'wall-street']);
    expect(Object.isFrozen(c.kafka)).toBe(true);
  });

  it('reads settings and splits lists', () => {
    const c = loadConfig({ KAFKA_BROKERS: 'a:1, b:2', ROUND_GAMES: 'crash,slot', API_PORT: '9000' });
    expect(c.kafka.brokers).toEqual(['a:1', 'b:2']);
    expect(c.engine.games).toEqual(['crash', 'slot']);
    expect(c.api.port).toBe(9000);
  });

  it.each([
    ['API_PORT', 'eighty', /API_PORT/],
    ['API_PORT', '70000', /API_PORT/],
    ['KAFKA_BROKERS', 'nohostport', /KAFKA_BROKERS/],
    ['ROUND_GAMES', 'crash,poker', /ROUND_GAMES/],
    ['ROUND_SERVER_SEED', 'xyz', /ROUND_SERVER_SEED/],
    ['DATABASE_SCHEMA', 'Bad-Name', /DATABASE_SCHEMA/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
  ])('stops on malformed %s=%s naming the setting', (key, value, pattern) => {
    expect(() => loadConfig({ [key]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [key]: value })).toThrow(pattern);
  });

  it('lets overrides win over the environment', () => {
    expect(loadConfig({ API_PORT: '1' }, { API_PORT: 2 }).api.port).toBe(2);
  });
});
