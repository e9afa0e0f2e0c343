/**
 * Backward-compatibility check of the schema registry (docs/contract.md "Topics": a reader on the new
 * schema reads records written with every older one). Uses Avro schema resolution rules
 * (Avro 1.11 specification, "Schema Resolution") as implemented by avsc's createResolver.
 */
import { loadRegistry } from './codec.ts';

export interface CompatProblem {
  readonly subject: string;
  readonly writerId: number;
  readonly readerId: number;
  readonly reason: string;
}

/**
 * For every subject in the registry at `dir`, tries to resolve each older version (writer) to
 * the newest (reader) and to decode a random value written with it.
 * @returns the problems found; empty when every older record stays readable.
 */
export function checkBackwardCompatibility(dir?: string, samples = 50): CompatProblem[] {
  const registry = loadRegistry(dir);
  const bySubject = new Map<string, { id: number; version: number; type: import('avsc').Type }[]>();
  for (const s of registry.values()) {
    const list = bySubject.get(s.subject) ?? [];
    list.push({ id: s.id, version: s.version, type: s.type });
    bySubject.set(s.subject, list);
  }
  const problems: CompatProblem[] = [];
  for (const [subject, versions] of bySubject) {
    versions.sort((a, b) => a.version - b.version);
    const reader = versions[versions.length - 1] as (typeof versions)[number];
    for (const writer of versions) {
      try {
        const resolver = reader.type.createResolver(writer.type);
        for (let i = 0; i < samples; i++)
          reader.type.fromBuffer(writer.type.toBuffer(writer.type.random()), resolver);
      } catch (err) {
        problems.push({ subject, writerId: writer.id, readerId: reader.id, reason: (err as Error).message });
      }
    }
  }
  return problems;
}
