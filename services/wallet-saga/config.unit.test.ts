/**
 * The saga's operator cache decides when it starts signing with a rotated secret (directory.ts,
 * docs/decisions/money/0014-signing-secret-rotation-with-overlap.md): WALLET_SAGA_CACHE_MS is
 * bounded by `SIGNING_CACHE_MAX_MS`, so the operator guide's "switch at least 10 s after rotating"
 * holds whatever the deployment sets; a longer setting is refused naming the variable and the bound.
 */
import { describe, expect, it } from 'vitest';
import { loadSections } from '../../lib/config/core.ts';
import { ConfigError } from '../../lib/errors.ts';
import { SIGNING_CACHE_MAX_MS, walletSagaSection } from './config.ts';

describe('WALLET_SAGA_CACHE_MS', () => {
  it('is at most SIGNING_CACHE_MAX_MS (5 s), half the 10 s the guide asks operators to wait', () => {
    expect(SIGNING_CACHE_MAX_MS).toBe(5_000);
    expect(loadSections([walletSagaSection], {}).walletSaga.cacheMs).toBe(5_000);
    expect(loadSections([walletSagaSection], { WALLET_SAGA_CACHE_MS: '5000' }).walletSaga.cacheMs).toBe(
      5_000,
    );
    expect(loadSections([walletSagaSection], { WALLET_SAGA_CACHE_MS: '0' }).walletSaga.cacheMs).toBe(0);
  });

  it.each(['5001', '60000', '3600000'])('refuses %s ms, naming the setting and the bound', (v) => {
    const load = () => loadSections([walletSagaSection], { WALLET_SAGA_CACHE_MS: v });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/WALLET_SAGA_CACHE_MS/);
    expect(load).toThrow(/5000/);
  });
});
