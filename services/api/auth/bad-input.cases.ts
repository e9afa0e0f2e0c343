/**
 * Body-validation cases of the REST bad-input suite (bad-input.int.test.ts): browser-key and
 * key-creation bodies that must be refused with 400 without anything being appended.
 */

/** One request of the suite and what it must get. */
export interface Case {
  readonly name: string;
  readonly method?: 'GET' | 'POST' | 'DELETE';
  readonly url?: string;
  readonly headers?: () => Record<string, string>;
  readonly payload?: unknown;
  readonly status: number;
  readonly reason?: string;
}

/** The 400 cases; `adminKey` gives the admin credential once the test API has started. */
export function bodyCases(adminKey: () => string): Case[] {
  return [
    ...(
      [
        ['empty bound_domain', { visitor_id: 'v1', bound_domain: '' }],
        [
          'overlong bound_domain',
          { visitor_id: 'v1', bound_domain: `${'a'.repeat(60)}.${'b'.repeat(60)}.example.com` },
        ],
        ['non-hostname bound_domain', { visitor_id: 'v1', bound_domain: 'https://example.com/' }],
        ['bound_domain with a bad label', { visitor_id: 'v1', bound_domain: '-bad.example.com' }],
        ['empty visitor_id', { visitor_id: '', bound_domain: 'example.com' }],
        ['overlong visitor_id', { visitor_id: 'v'.repeat(129), bound_domain: 'example.com' }],
        ['missing bound_domain', { visitor_id: 'v1' }],
      ] as const
    ).map(
      ([name, payload]): Case => ({
        name: `browser-key: ${name}`,
        method: 'POST',
        url: '/api/auth/browser-key',
        headers: () => ({}),
        payload,
        status: 400,
      }),
    ),
    ...(
      [
        ['unknown scope', { name: 'x', scopes: ['read:everything'] }],
        ['no scopes', { name: 'x', scopes: [] }],
        ['public key without origins', { name: 'x', scopes: ['read:games'], kind: 'public' }],
        [
          'public key with a path as origin',
          { name: 'x', scopes: ['read:games'], kind: 'public', allowed_origins: ['https://a.com/x'] },
        ],
        [
          'private key with origins',
          { name: 'x', scopes: ['read:games'], allowed_origins: ['https://a.com'] },
        ],
        ['rate_limit 0', { name: 'x', scopes: ['read:games'], rate_limit: 0 }],
      ] as const
    ).map(
      ([name, payload]): Case => ({
        name: `create key: ${name}`,
        method: 'POST',
        url: '/api/auth/keys',
        headers: () => ({ 'x-api-key': adminKey() }),
        payload,
        status: 400,
      }),
    ),
  ];
}
