/**
 * The ops console (/console/#/ops, console/README.md) in headless Chromium on the whole stack
 * (tests/support/console.ts), signed in with the admin key: the rounds projector stopped, its
 * consumer group's lag grows on the consumer-groups page and falls once it is back; a record the
 * consumers cannot decode is dead-lettered for real, inspected and replayed from the dead-letters page;
 * axe-core finds no serious or critical violation on any ops page. CONSOLE_SCREENSHOTS=1 writes the
 * README's screenshot of the consumer groups (docs/screenshots/).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetterMessage } from '../../lib/log/dead-letter.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import {
  CONTEXT_OPTIONS,
  type ConsolePage,
  type ConsoleStack,
  gotoRoute,
  screenshot,
  seriousViolations,
  startConsoleStack,
} from '../support/console.ts';
import { waitFor } from '../support/poll.ts';
import { roundMessage, sampleRound } from '../support/projector.ts';

let cs: ConsoleStack;
let ops: ConsolePage;

beforeAll(async () => {
  cs = await startConsoleStack({ roundSpeed: 20 });
  ops = await cs.openOps();
}, 180_000);

afterAll(async () => {
  await cs?.close();
}, 60_000);

/** Sum of the Lag column over the rows of consumer group `group` on the groups page, or undefined. */
async function lagShown(page: Page, group: string): Promise<number | undefined> {
  const rows = await page
    .getByTestId('groups-table')
    .locator(`tbody tr[data-group-id="${group}"]`)
    .evaluateAll((trs) => trs.map((tr) => (tr.querySelector('td:last-child')?.textContent ?? '').trim()));
  if (rows.length === 0) return undefined;
  return rows.reduce((s, t) => s + (Number(t) || 0), 0);
}

describe('ops console', () => {
  it("shows a stopped consumer's lag growing on the consumer-groups page and falling once it is back", async () => {
    const { page } = ops;
    const group = cs.stack.env.PROJECTOR_GROUP as string;
    await gotoRoute(page, '#/ops/groups', 'Consumer groups');
    await waitFor(
      'the projector group caught up',
      async () => ((await lagShown(page, group)) === 0 ? true : undefined),
      30_000,
      500,
    );
    await cs.stack.stopOne('projector');
    try {
      // The engine keeps appending rounds; the page refreshes every 2 s.
      const first = await waitFor(
        'the projector lag above zero',
        async () => {
          const lag = await lagShown(page, group);
          return lag !== undefined && lag > 0 ? lag : undefined;
        },
        30_000,
        500,
      );
      await waitFor(
        'the projector lag growing',
        async () => {
          const lag = await lagShown(page, group);
          return lag !== undefined && lag > first ? lag : undefined;
        },
        30_000,
        500,
      );
      await screenshot(page, 'ops-consumer-groups');
    } finally {
      cs.stack.startOne('projector');
    }
    await waitFor(
      'the projector lag back to zero',
      async () => ((await lagShown(page, group)) === 0 ? true : undefined),
      60_000,
      500,
    );
    expect(ops.errors).toEqual([]);
  });

  it('shows records the consumers dead-lettered, inspects one, and replays what decodes now', async () => {
    const { page } = ops;
    const { config } = cs.stack;
    const rounds = topicName(config, 'rounds');
    const dlq = topicName(config, 'roundsDeadLetter');
    // A round dead-lettered back when it did not decode, which decodes now (as the dead-letters
    // command's int test makes one), and a record no consumer can decode, dead-lettered for real.
    const fixable = sampleRound(
      'crash',
      900_000_000 + Math.floor(Math.random() * 1_000_000),
      Date.now() - 60_000,
    );
    const kafka = createKafka(config, 'console-ops-poison', createLogger('test', 'warn'));
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({
        topic: dlq,
        messages: [
          deadLetterMessage(
            {
              message: {
                ...roundMessage(fixable),
                offset: '77',
                timestamp: String(Date.now()),
                attributes: 0,
                headers: {},
              } as never,
              reason: 'unknown schema id 1',
            },
            // The rounds projector's checkpoint name.
            { topic: rounds, partition: 0, projection: 'rounds' },
          ),
        ],
      });
      await producer.send({
        topic: rounds,
        messages: [{ key: 'crash', value: Buffer.from('garbage bytes') }],
      });
    } finally {
      await producer.disconnect();
    }
    // The projector (and settlement, a checkpointed consumer of rounds too) dead-letter the garbage.
    type Dead = { partition: number; offset: string; reason: string; value: unknown };
    const dead = await waitFor(
      'the garbage dead-lettered',
      async () => {
        const r = await cs.admin<{ records: Dead[] }>('GET', `/admin/ops/dead-letters/${dlq}?limit=100`);
        const garbage = r.body.records?.filter((x) => x.reason.includes('bad magic byte')) ?? [];
        return garbage.length > 0 ? r.body.records : undefined;
      },
      30_000,
      250,
    );
    const idOf = (x: Dead) => `${x.partition}:${x.offset}`;
    const garbage = dead.filter((x) => x.reason.includes('bad magic byte')).map(idOf);
    const good = dead.filter((x) => x.reason === 'unknown schema id 1').map(idOf);
    expect(good).toHaveLength(1);

    await gotoRoute(page, '#/ops/dead-letters', 'Dead letters');
    const row = page.getByTestId('dead-letters-table').locator('tbody tr').filter({ hasText: dlq });
    await row.waitFor({ timeout: 10_000 });
    expect((await row.textContent()) ?? '').toContain(String(dead.length));
    await row.getByRole('link', { name: dlq }).click();
    await page.getByRole('heading', { level: 1, name: `Dead letters of ${dlq}` }).waitFor();
    await page.getByRole('button', { name: `Inspect ${garbage[0]}` }).click();
    const shown = (await page.getByTestId('dead-letter-record').textContent()) ?? '';
    expect(shown).toContain('bad magic byte');
    expect(shown).toContain(rounds);
    for (const id of [...garbage, ...good])
      await page.getByRole('checkbox', { name: `Select ${id}` }).check();
    await page.getByRole('button', { name: 'Replay selected' }).click();
    const result = await waitFor(
      'the replay result',
      async () => {
        const t = ((await page.getByTestId('replay-result').textContent()) ?? '').trim();
        return t === '' ? undefined : t;
      },
      15_000,
      200,
    );
    // The round is appended to rounds again; the garbage stays where it is, said so.
    expect(result).toContain(`Replayed ${good[0]}`);
    expect(result).toContain('Still undecodable, not replayed');
    for (const id of garbage) expect(result).toContain(id);
    // And the projector wrote the replayed round to the read model.
    const { sql } = cs.stack.wallet;
    await waitFor(
      'the replayed round in the read model',
      async () => {
        const [r] = await sql`select 1 from rounds where round_id = ${fixable.round_id}`;
        return r ? true : undefined;
      },
      15_000,
      250,
    );
    expect(ops.errors).toEqual([]);
  });

  it('axe-core finds no serious or critical violation on any ops page', async () => {
    const { page } = ops;
    const pages: [string, string][] = [
      ['#/ops/topics', 'Topics'],
      ['#/ops/groups', 'Consumer groups'],
      ['#/ops/dead-letters', 'Dead letters'],
      ['#/ops/rebuilds', 'Rebuilds'],
      ['#/ops/edges', 'Edges'],
      ['#/ops/keys', 'API keys'],
      ['#/ops/operators', 'Operators'],
    ];
    const found: Record<string, unknown> = {};
    for (const [hash, heading] of pages) {
      await gotoRoute(page, hash, heading);
      // The edges page reads both edges of the stack (OPS_EDGE_URLS defaults to them).
      if (hash === '#/ops/edges')
        await waitFor(
          'both edges listed',
          async () =>
            (await page.getByTestId('edges-table').locator('tbody tr').count()) === 2 ? true : undefined,
          10_000,
          200,
        );
      const v = await seriousViolations(page);
      if (v.length > 0) found[hash] = v;
    }
    const anon = await cs.browser.newContext(CONTEXT_OPTIONS);
    try {
      const p = await anon.newPage();
      await p.goto(`${cs.base}/console/#/ops/topics`);
      await p.getByRole('heading', { level: 1, name: 'Ops console sign-in' }).waitFor({ timeout: 15_000 });
      const v = await seriousViolations(p);
      if (v.length > 0) found['ops sign-in'] = v;
    } finally {
      await anon.close();
    }
    expect(found).toEqual({});
  });
});
