import { describe, expect, it } from 'vitest';
import {
  barsOf,
  errorMessage,
  formatMinor,
  formatMs,
  formatRate,
  formatTime,
  isoOfLocal,
  linkTokenOf,
  parseRoute,
  queryOf,
  reconciliationHref,
} from './format.ts';

describe('console routes', () => {
  it('parses portal and ops pages with their argument, defaulting unknown pages to the first', () => {
    expect(parseRoute('#/portal/callbacks/42')).toEqual({ area: 'portal', page: 'callbacks', arg: '42' });
    expect(parseRoute('#/portal')).toEqual({ area: 'portal', page: 'overview', arg: '' });
    expect(parseRoute('#/portal/nope')).toEqual({ area: 'portal', page: 'overview', arg: '' });
    expect(parseRoute('#/ops/dead-letters/casino.rounds.dlq')).toEqual({
      area: 'ops',
      page: 'dead-letters',
      arg: 'casino.rounds.dlq',
    });
    expect(parseRoute('#/ops/dead-letters/a%2Fb')).toEqual({ area: 'ops', page: 'dead-letters', arg: 'a/b' });
    expect(parseRoute('')).toEqual({ area: 'home', page: '', arg: '' });
    expect(parseRoute('#portal-link=plk_x')).toEqual({ area: 'home', page: '', arg: '' });
  });

  it('reads the portal link token from the hash, and nothing from other hashes', () => {
    expect(linkTokenOf('#portal-link=plk_abc123')).toBe('plk_abc123');
    expect(linkTokenOf('#portal-link=plk_a%2Bb')).toBe('plk_a+b');
    expect(linkTokenOf('#/portal/overview')).toBeNull();
    expect(linkTokenOf('#portal-link=')).toBeNull();
    expect(linkTokenOf('')).toBeNull();
  });
});

describe('console links and queries', () => {
  it('leaves blank fields out of a query string and encodes the rest', () => {
    expect(queryOf({ user_id: ' p 1 ', tx_id: '', round_id: null, status: undefined })).toBe('?user_id=p+1');
    expect(queryOf({ a: '', b: null })).toBe('');
    expect(queryOf({ from: '2026-11-28T10:00:00.000Z', limit: 50 })).toBe(
      '?from=2026-11-28T10%3A00%3A00.000Z&limit=50',
    );
  });

  it('builds the reconciliation download links of a day', () => {
    expect(reconciliationHref('2026-11-28', 'csv')).toBe(
      '/api/portal/reconciliation?date=2026-11-28&format=csv',
    );
    expect(reconciliationHref('2026-11-28', 'json')).toBe(
      '/api/portal/reconciliation?date=2026-11-28&format=json',
    );
  });

  it('turns a datetime-local value into an instant with the browser offset', () => {
    // getTimezoneOffset() is minutes behind UTC: -120 in UTC+2.
    expect(isoOfLocal('2026-11-28T12:30', -120)).toBe('2026-11-28T10:30:00.000Z');
    expect(isoOfLocal('2026-11-28T12:30:15', 0)).toBe('2026-11-28T12:30:15.000Z');
    expect(isoOfLocal('', 0)).toBe('');
    expect(isoOfLocal('yesterday', 0)).toBe('');
  });
});

describe('console formatting', () => {
  it('formats latencies, rates, times and minor amounts, with a dash for none', () => {
    expect(formatMs(12.4)).toBe('12 ms');
    expect(formatMs(1250)).toBe('1.25 s');
    expect(formatMs(null)).toBe('—');
    expect(formatRate(0.975)).toBe('97.5 %');
    expect(formatRate(null)).toBe('—');
    expect(formatTime('2026-11-28T10:30:15.123Z')).toBe('2026-11-28 10:30:15 UTC');
    expect(formatTime(null)).toBe('—');
    expect(formatMinor(1250, 'EUR')).toBe('12.50 EUR');
    expect(formatMinor('1250', 'JPY')).toBe('1250 JPY');
    expect(formatMinor(5, 'nope')).toBe('5 nope');
  });

  it('shows the API error body as text: error and detail, message, or the status alone', () => {
    expect(
      errorMessage(403, { error: 'Forbidden', success: false, reason: 'scope', detail: 'admin only' }),
    ).toBe('Forbidden: admin only (HTTP 403)');
    expect(
      errorMessage(409, {
        error: 'this is the last active admin key: create another admin key first',
        success: false,
      }),
    ).toBe('this is the last active admin key: create another admin key first (HTTP 409)');
    expect(errorMessage(400, { title: 'Bad Request', detail: 'date: must be YYYY-MM-DD' })).toBe(
      'Bad Request: date: must be YYYY-MM-DD (HTTP 400)',
    );
    expect(errorMessage(500, { message: 'boom' })).toBe('boom (HTTP 500)');
    expect(errorMessage(502, 'Bad gateway\n')).toBe('Bad gateway (HTTP 502)');
    expect(errorMessage(503, null)).toBe('The request failed (HTTP 503)');
    expect(errorMessage(500, {})).toBe('The request failed (HTTP 500)');
  });
});

describe('per-minute chart', () => {
  it('stacks failed on succeeded, the tallest minute reaching the top', () => {
    const { bars, max } = barsOf(
      [
        { minute: 'a', total: 4, succeeded: 3, failed: 1 },
        { minute: 'b', total: 2, succeeded: 2, failed: 0 },
      ],
      200,
      100,
    );
    expect(max).toBe(4);
    expect(bars[0]).toMatchObject({ okH: 75, okY: 25, failH: 25, failY: 0 });
    expect(bars[1]).toMatchObject({ okH: 50, okY: 50, failH: 0 });
    expect(bars[1]?.x).toBeCloseTo(110);
    expect(bars[0]?.width).toBeCloseTo(80);
  });

  it('draws nothing tall for an idle hour (scale of at least 1)', () => {
    const { bars, max } = barsOf([{ minute: 'a', total: 0, succeeded: 0, failed: 0 }], 60, 10);
    expect(max).toBe(1);
    expect(bars[0]).toMatchObject({ okH: 0, failH: 0, okY: 10 });
  });
});
