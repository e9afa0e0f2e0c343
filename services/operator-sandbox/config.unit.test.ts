import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';

describe('sandbox settings (services/operator-sandbox/config.ts)', () => {
  it('defaults: loopback 8090, schema sandbox, 1000.00, secret from a file', () => {
    const c = loadConfig({});
    expect(c.sandbox).toMatchObject({
      host: '127.0.0.1',
      port: 8090,
      signingSecret: '',
      dbSchema: 'sandbox',
      initialBalance: '1000.00',
      answerPreset: null,
      strict: false,
    });
    expect(c.sandbox.secretFile).toMatch(/\.data\/sandbox\/signing-secret$/);
  });

  it('reads the settings', () => {
    const c = loadConfig({
      SANDBOX_PORT: '9000',
      SANDBOX_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      SANDBOX_DB_SCHEMA: 't_sbx_1',
      SANDBOX_INITIAL_BALANCE: '12.5',
      SANDBOX_ANSWER_PRESET: 'seed',
      SANDBOX_STRICT: 'true',
    });
    expect(c.sandbox).toMatchObject({
      port: 9000,
      signingSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      dbSchema: 't_sbx_1',
      initialBalance: '12.5',
      answerPreset: 'seed',
      strict: true,
    });
  });

  it.each([
    ['SANDBOX_SIGNING_SECRET', 'secret'],
    ['SANDBOX_INITIAL_BALANCE', '-1'],
    ['SANDBOX_INITIAL_BALANCE', '1.0000000000001'],
    ['SANDBOX_INITIAL_BALANCE', '1e3'],
    ['SANDBOX_DB_SCHEMA', 'Bad-Schema'],
    ['SANDBOX_PORT', '70000'],
    ['SANDBOX_ANSWER_PRESET', 'lenient'],
    ['SANDBOX_STRICT', 'yes'],
  ])('refuses %s=%s naming the setting', (key, value) => {
    expect(() => loadConfig({ [key]: value })).toThrow(key);
  });
});
