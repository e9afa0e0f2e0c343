/**
 * How the sandbox plays an operator: the answer preset it answers in
 * (presets.ts) and whether it is strict. Set at start from SANDBOX_ANSWER_PRESET and SANDBOX_STRICT
 * (config.ts) and at run time through PUT /_sandbox/mode (admin.ts); like fault rules and quirks,
 * the app's live state, read by the next request.
 *
 * Strict (the strictest operator of docs/architecture.md "Money rules"):
 * - every callback body is exactly its form's (schemas/callbacks/*.request.json): an unknown,
 *   missing or mistyped field is refused;
 * - a win needs the bet it refers to booked (form A: linked_tx_id; form B: the player's bet of that
 *   game and round), a free bet's win too: the free bet must have been registered with the bet
 *   callback (mode "free", amount 0). Non-strict credits a free bet's win without its bet, as an
 *   operator that keeps its grants to itself would;
 * - it answers with the status in the body (`status-in-body`) unless a preset is set explicitly.
 */
import { z } from 'zod';
import { ANSWER_PRESETS, type AnswerPreset } from '../../rules/wallet/answers.ts';

export interface SandboxMode {
  readonly preset: AnswerPreset;
  readonly strict: boolean;
}

/** Body of PUT /_sandbox/mode: what is given changes; strict without a preset takes its default. */
export const modeBodySchema = z.strictObject({
  preset: z.enum(ANSWER_PRESETS).optional(),
  strict: z.boolean().optional(),
});
export type ModeBody = z.infer<typeof modeBodySchema>;

/** The preset of a sandbox that names none: strict answers in the body, the lenient one by status. */
export function defaultPreset(strict: boolean): AnswerPreset {
  return strict ? 'status-in-body' : 'http-status';
}

/** The live mode of one app, shared by its routes. */
export class Mode {
  private current: SandboxMode;
  private readonly initial: SandboxMode;

  /** @param preset the configured preset, or null for the strictness's default. */
  constructor(preset: AnswerPreset | null, strict: boolean) {
    this.initial = { preset: preset ?? defaultPreset(strict), strict };
    this.current = this.initial;
  }

  get preset(): AnswerPreset {
    return this.current.preset;
  }

  get strict(): boolean {
    return this.current.strict;
  }

  /** Changes what `body` names; `strict` alone also moves the preset to that strictness's default. */
  set(body: ModeBody): SandboxMode {
    const strict = body.strict ?? this.current.strict;
    const preset = body.preset ?? (body.strict === undefined ? this.current.preset : defaultPreset(strict));
    this.current = { preset, strict };
    return this.current;
  }

  /** Back to the configured mode. */
  reset(): SandboxMode {
    this.current = this.initial;
    return this.current;
  }

  /** The mode as the admin routes show it. */
  list(): SandboxMode {
    return { ...this.current };
  }
}
