/**
 * The one place this Deno service reads its environment: the sections of settings.ts, read from
 * `Deno.env` instead of `process.env`, with the same names and rules as every Node service.
 */
import { configLoader } from '../../lib/config/core.ts';
import { WT_SECTIONS, type WtConfig } from './settings.ts';

export type { WtConfig };

const loadFrom = configLoader(WT_SECTIONS);

/**
 * Validated, frozen configuration of `env` (default: the process environment through `Deno.env`).
 * @throws ConfigError naming every malformed or unknown setting.
 */
export function loadWtConfig(
  env: Readonly<Record<string, string | undefined>> = Deno.env.toObject(),
  overrides: Readonly<Record<string, string | number | undefined>> = {},
): WtConfig {
  return loadFrom(env, overrides);
}
