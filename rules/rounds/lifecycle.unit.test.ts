import { describe, expect, it } from 'vitest';
import { evolvePhase, type Phase } from './lifecycle.ts';
import type { RoundEvent } from './round.ts';
import { lifecycleOf, sampleRound } from './samples.ts';

const T = Date.UTC(2026, 10, 28, 12);
const slot = (seq: number) => sampleRound('slot', seq, T + seq * 10_000);
const engine = (seq: number): RoundEvent[] => [...lifecycleOf(slot(seq)), slot(seq)];
const fold = (events: readonly RoundEvent[]): Phase | undefined =>
  events.reduce<Phase | undefined>((p, e) => evolvePhase(p, e), undefined);

describe('evolvePhase', () => {
  it('follows the engine: betting, running, finished', () => {
    const [opened, closed, finished] = engine(1) as [RoundEvent, RoundEvent, RoundEvent];
    expect(fold([opened])?.phase).toBe('betting');
    expect(fold([opened, closed])?.phase).toBe('running');
    expect(fold([opened, closed, finished])).toMatchObject({ phase: 'finished', roundId: slot(1).round_id });
  });

  it('opens the engine’s next round after a RoundFinished 4 ids ahead of it (another producer’s record)', () => {
    const [opened] = engine(4);
    const p = fold([...engine(3), slot(7), opened as RoundEvent]);
    expect(p).toMatchObject({ phase: 'betting', opened: { round_id: slot(4).round_id } });
  });

  it('keeps the open round open when a RoundFinished of another id comes in', () => {
    const [opened, closed, finished] = engine(4) as [RoundEvent, RoundEvent, RoundEvent];
    const during = fold([...engine(3), opened, slot(9)]);
    expect(during).toMatchObject({ phase: 'betting', opened: { round_id: slot(4).round_id } });
    expect(fold([...engine(3), opened, slot(9), closed, finished])).toMatchObject({
      phase: 'finished',
      roundId: slot(4).round_id,
    });
  });

  it('ignores a replayed RoundOpened of a round already opened or finished', () => {
    const [opened3] = engine(3);
    expect(fold([...engine(3), opened3 as RoundEvent])).toMatchObject({ phase: 'finished' });
    expect(fold([slot(5), ...lifecycleOf(slot(4)).slice(0, 1)])).toMatchObject({ phase: 'finished' });
  });
});
