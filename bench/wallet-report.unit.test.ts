import { describe, expect, it } from 'vitest';
import type { ScenarioResult } from './wallet-e2e.ts';
import type { RawResult } from './wallet-raw.ts';
import { cpuBound } from './wallet-report.ts';
import type { UsageDelta } from './wallet-usage.ts';

const usage = (machineCores: number, seconds: number) => ({ machineCores, seconds }) as UsageDelta;

describe('cpuBound: the most the machine can settle, from the CPU it spent', () => {
  it('divides the CPU spent by the work done, and the cores by the CPU per settled bet', () => {
    // Baseline: 2 cores busy for 5 s for 4,000 pairs (800/s) = 2.5 CPU-ms a pair.
    const raw = { pairs: 4000, pairsPerS: 800 } as RawResult;
    // Scenario: 1.5 cores busy for 20 s for 3,000 settled bets = 10 CPU-ms a settled bet.
    const scenario = { settled: 3000, usage: usage(1.5, 20) } as ScenarioResult;
    const b = cpuBound(raw, usage(2, 5), scenario, 2);
    expect(b.msPerPair).toBeCloseTo(2.5, 9);
    expect(b.msPerSettled).toBeCloseTo(10, 9);
    // 2 cores ÷ 10 ms = 200 settled/s at most, a quarter of the 800 raw pairs/s.
    expect(b.maxSettledPerS).toBeCloseTo(200, 9);
    expect(b.ceiling).toBeCloseTo(0.25, 9);
  });
});
