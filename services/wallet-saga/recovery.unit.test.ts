import { describe, expect, it } from 'vitest';
import { pathOf, RecoveryWatch } from './recovery.ts';

describe('RecoveryWatch', () => {
  it('a success on a path after a failure there is a recovery, once', () => {
    const w = new RecoveryWatch();
    expect(w.answered('op', '/wallet/win', 1_000, true)).toBe(false);
    expect(w.answered('op', '/wallet/win', 1_010, true)).toBe(false);
    expect(w.answered('op', '/wallet/win', 2_000, false)).toBe(true);
    expect(w.answered('op', '/wallet/win', 2_001, false)).toBe(false);
    expect(w.failingPaths).toBe(0);
  });

  it('successes on another path, or of another operator, are not a recovery of the failing one', () => {
    const w = new RecoveryWatch();
    w.answered('op', '/wallet/win', 1_000, true);
    // The bet path kept answering during the win path's outage: not the win path back.
    expect(w.answered('op', '/wallet/bet', 1_500, false)).toBe(false);
    expect(w.answered('other', '/wallet/win', 1_500, false)).toBe(false);
    expect(w.answered('op', '/wallet/win', 1_600, false)).toBe(true);
  });

  it('a success sent before the last failure (answered after it) is no recovery', () => {
    const w = new RecoveryWatch();
    w.answered('op', '/wallet/win', 2_000, true);
    expect(w.answered('op', '/wallet/win', 1_900, false)).toBe(false);
    expect(w.answered('op', '/wallet/win', 2_000, false)).toBe(false);
    expect(w.answered('op', '/wallet/win', 2_100, false)).toBe(true);
  });

  it('a failure answered late keeps the latest failure time', () => {
    const w = new RecoveryWatch();
    w.answered('op', '/wallet/win', 3_000, true);
    w.answered('op', '/wallet/win', 2_000, true);
    expect(w.answered('op', '/wallet/win', 2_500, false)).toBe(false);
    expect(w.answered('op', '/wallet/win', 3_001, false)).toBe(true);
  });

  it('with no failure seen, a success is not a recovery', () => {
    expect(new RecoveryWatch().answered('op', '/wallet/bet', 1, false)).toBe(false);
  });
});

describe('pathOf', () => {
  it('keeps the path of a URL, without its query', () => {
    expect(pathOf('http://127.0.0.1:9/wallet/win')).toBe('/wallet/win');
    expect(pathOf('http://op.test/webhooks/platform/rewards?user_id=a&amount=1')).toBe(
      '/webhooks/platform/rewards',
    );
    expect(pathOf('/relative/path?x=1')).toBe('/relative/path');
  });
});
