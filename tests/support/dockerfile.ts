/**
 * A small Dockerfile reader for the build test (tests/build.e2e.test.ts): stages, their base and
 * instructions, and the parts of COPY and CMD the test checks. Covers the forms the project's
 * Dockerfile uses (line continuations, `FROM image AS name`, `COPY [--flag=value ...] src... dest`,
 * exec-form CMD); it is not a general parser.
 */

export interface Instruction {
  /** Upper-case keyword: RUN, COPY, CMD, ... */
  readonly op: string;
  readonly args: string;
}

export interface Stage {
  /** `AS` name, or the stage's index as text when unnamed. */
  readonly name: string;
  /** What FROM names: an image (possibly `${ARG}`) or an earlier stage. */
  readonly base: string;
  readonly steps: Instruction[];
}

export interface Copy {
  /** The stage copied from (`--from=`), or undefined for the build context. */
  readonly from: string | undefined;
  readonly sources: string[];
  readonly dest: string;
}

/** The stages of `text`, in order. @throws on an instruction before the first FROM other than ARG. */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text
    .split('\n')
    .filter((l) => !l.trim().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n');
  for (const raw of lines) {
    const m = /^\s*(\S+)\s*(.*?)\s*$/.exec(raw);
    if (!m?.[1]) continue;
    const op = m[1].toUpperCase();
    const args = m[2] ?? '';
    if (op === 'FROM') {
      const from = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!from?.[1]) throw new Error(`unreadable FROM: ${args}`);
      stages.push({ name: from[2] ?? String(stages.length), base: from[1], steps: [] });
    } else if (stages.length > 0) {
      stages.at(-1)?.steps.push({ op, args });
    } else if (op !== 'ARG') {
      throw new Error(`${op} before the first FROM`);
    }
  }
  return stages;
}

/** The COPY instructions of `stage`, split into source stage, sources and destination. */
export function copiesOf(stage: Stage): Copy[] {
  return stage.steps
    .filter((s) => s.op === 'COPY')
    .map((s) => {
      const words = s.args.trim().startsWith('[')
        ? (JSON.parse(s.args) as string[])
        : s.args.split(/\s+/).filter(Boolean);
      const flags = words.filter((w) => w.startsWith('--'));
      const paths = words.filter((w) => !w.startsWith('--'));
      const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
      return { from, sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' };
    });
}

/** The RUN commands of `stage`, as written. */
export function runsOf(stage: Stage): string[] {
  return stage.steps.filter((s) => s.op === 'RUN').map((s) => s.args);
}

/** The exec-form CMD of `stage` (the last one). @throws when it has none or a shell-form one. */
export function cmdOf(stage: Stage): string[] {
  const cmd = stage.steps.filter((s) => s.op === 'CMD').at(-1);
  if (!cmd?.args.startsWith('[')) throw new Error(`stage ${stage.name}: no exec-form CMD`);
  return JSON.parse(cmd.args) as string[];
}
