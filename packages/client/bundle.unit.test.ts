import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUNDLE_PATH, bundleText } from './bundle.ts';

describe('the pages’ build of the client', () => {
  it('is what the sources bundle to (run `npx tsx packages/client/bundle.ts` after a change)', async () => {
    expect(readFileSync(BUNDLE_PATH, 'utf8')).toBe(await bundleText());
  });
});
