/**
 * What a newcomer sees of `npm start` on a fresh machine (docs/decisions/runtime/0011-development-start.md):
 * scripts/start.sh against a broker that has just started (a private one, tests/support/private-infra.ts:
 * no consumer-offsets topic yet, so every consumer group forms from nothing) prints no line at pino's
 * error level or above, no kafkajs warning about the idempotent producers' retries and no gateway
 * warning while the API starts; and the demo pages, opened from one machine by more than three
 * fresh browsers, each get a browser key (npm start is development: no per-IP cap of 3 an hour); the
 * browser console is built and served at /console/.
 * On a terminal (a pseudo-terminal of util-linux `script`) the services' JSON lines are shown as
 * pino-pretty's text.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateKafka, startPrivateKafka } from './support/private-infra.ts';
import { ctrlC, howItStopped, removeStacks, startStack, waitStackReady } from './support/start-script.ts';

let broker: PrivateKafka | undefined;

beforeAll(async () => {
  broker = await startPrivateKafka();
}, 120_000);

afterAll(async () => {
  await removeStacks();
  await broker?.close();
}, 120_000);

/**
 * Lines of a start's output that would make it read as a failure: pino level 50 (error) or 60
 * (fatal), kafkajs' "Limiting retries for the idempotent producer" warning, any gateway warning.
 */
function startProblems(output: string): string[] {
  return output
    .split('\n')
    .filter(
      (l) =>
        /"level":(50|60)\b/.test(l) ||
        l.includes('Limiting retries for the idempotent producer') ||
        /^\[gateway\] \{"level":40\b/.test(l),
    )
    .map((l) => l.slice(0, 400));
}

describe('npm start on a fresh broker', () => {
  it('reads as a normal start and mints browser keys for more than three visitors of one machine', async () => {
    const stack = await startStack({ KAFKA_BROKERS: (broker as PrivateKafka).brokers });
    await waitStackReady(stack);
    // The consumers that join last (the API's, the saga's) have had their chance to log.
    await new Promise((r) => setTimeout(r, 3000));
    const problems = startProblems(stack.output);
    expect(problems, problems.join('\n')).toEqual([]);

    const gateway = `http://127.0.0.1:${stack.ports.GATEWAY_PORT}`;
    for (let i = 1; i <= 6; i++) {
      const res = await fetch(`${gateway}/api/auth/browser-key`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ visitor_id: randomUUID(), bound_domain: '127.0.0.1' }),
      });
      expect(res.status, `browser key ${i}: ${await res.text()}`).toBe(200);
    }

    // The browser console, built by the start, comes from the gateway with its policy.
    const page = await fetch(`${gateway}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('console.js');
    expect((await fetch(`${gateway}/console/console.js`)).status).toBe(200);

    await ctrlC(stack);
    expect(stack.exited.code, howItStopped(stack)).toBe(0);
  }, 300_000);

  it("shows the services' logs as text on a terminal", async () => {
    const stack = await startStack({ KAFKA_BROKERS: (broker as PrivateKafka).brokers }, { terminal: true });
    await waitStackReady(stack);
    const lines = stack.output.split(/\r?\n/);
    // pino-pretty's one-line form after concurrently's prefix: `[api] [12:00:01.234] INFO: …`.
    expect(lines.filter((l) => /^\[api\] \[\d\d:\d\d:\d\d\.\d{3}\] INFO: /.test(l)).length).toBeGreaterThan(
      0,
    );
    expect(lines.filter((l) => /^\[[a-z-]+\] \{"level":/.test(l))).toEqual([]);
    await ctrlC(stack);
    expect(stack.exited.code, howItStopped(stack)).toBe(0);
    // The services' stop messages came through the formatter after the Ctrl-C.
    expect(stack.output).toMatch(/\[api\] \[[\d:.]+\] INFO: .*shutting down/);
  }, 300_000);
});
