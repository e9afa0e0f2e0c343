import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { int, loadSections, section } from './core.ts';
import { kafkaSection, processSection } from './shared.ts';

const demo = section({
  name: 'demo',
  prefixes: ['DEMO_'],
  shape: { DEMO_PORT: int(0, 65535).default(7), DEMO_LIMIT: int(1, 10).default(3) },
  build: (r) => {
    if (r.DEMO_LIMIT > r.DEMO_PORT) throw new ConfigError('DEMO_LIMIT: at most DEMO_PORT');
    return { port: r.DEMO_PORT, limit: r.DEMO_LIMIT };
  },
});

describe('loadSections', () => {
  it('builds each section under its name, with defaults, frozen', () => {
    const c = loadSections([demo, processSection], { DEMO_PORT: '9' });
    expect(c.demo).toEqual({ port: 9, limit: 3 });
    expect(c.process.logLevel).toBe('info');
    expect(Object.isFrozen(c.demo)).toBe(true);
  });

  it('stops on an unknown setting under a prefix a loaded section owns, naming it', () => {
    expect(() => loadSections([demo], { DEMO_PROT: '9' })).toThrow(ConfigError);
    expect(() => loadSections([demo], { DEMO_PROT: '9' })).toThrow(/DEMO_PROT: unknown setting/);
    expect(() => loadSections([kafkaSection], { TOPIC_NAMESPAC: 'x' })).toThrow(/TOPIC_NAMESPAC/);
  });

  it('ignores settings under prefixes no loaded section owns (other services read them)', () => {
    expect(loadSections([demo], { BOTS_PLAYERS: '6', KAFKAJS_NO_PARTITIONER_WARNING: '1' }).demo.port).toBe(
      7,
    );
  });

  it("accepts the local broker's script settings beside KAFKA_BROKERS (a moved local Kafka)", () => {
    const env = { KAFKA_PORT: '29092', KAFKA_CONTROLLER_PORT: '29093', KAFKA_BROKERS: '127.0.0.1:29092' };
    expect(loadSections([kafkaSection], env).kafka.brokers).toEqual(['127.0.0.1:29092']);
    expect(() => loadSections([kafkaSection], { KAFKA_PORT: 'x' })).toThrow(/KAFKA_PORT/);
  });

  it('names every malformed setting at once, and cross-field rules of a section', () => {
    const err = (() => {
      try {
        loadSections([demo, kafkaSection], { DEMO_PORT: 'x', KAFKA_BROKERS: 'nohost' });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).toMatch(/DEMO_PORT/);
    expect(err?.message).toMatch(/KAFKA_BROKERS/);
    expect(() => loadSections([demo], { DEMO_PORT: '2', DEMO_LIMIT: '5' })).toThrow(
      /DEMO_LIMIT: at most DEMO_PORT/,
    );
  });

  it('lets overrides win and reads an empty string as unset', () => {
    expect(loadSections([demo], { DEMO_PORT: '1', DEMO_LIMIT: '1' }, { DEMO_PORT: 2 }).demo.port).toBe(2);
    expect(loadSections([demo], { DEMO_PORT: '' }).demo.port).toBe(7);
  });
});
