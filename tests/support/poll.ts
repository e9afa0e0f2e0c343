/**
 * The one polling helper of the tests (docs/conventions.md §14): wait until a check yields, with a deadline
 * that names what was awaited. Everything that waits for a condition in a test goes through it.
 */

/** Polls `check` every `intervalMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}`,
  );
}

/** Resolves once `check()` is true, polling every 20 ms. @throws after `timeoutMs` naming `what`. */
export async function until(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  await waitFor(what, () => (check() ? true : undefined), timeoutMs, 20);
}
