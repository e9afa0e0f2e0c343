/**
 * Makes the official uWebSockets.js binaries load on a glibc older than the one they were linked
 * against (Debian 12: 2.36; the builds need 2.38), without a system change. Run by `npm install`
 * (package.json postinstall) and by scripts/ensure-deps.sh; idempotent, and a no-op on a glibc that
 * loads them as they are (Debian 13, Ubuntu 24.04, the production image).
 *
 * Why it is enough (docs/decisions/runtime/0002-uwebsockets-on-node-24-and-glibc.md): the only symbols the builds take from glibc 2.38
 * are the C23 forms of `strtol`, `strtoul`, `strtoull` and `sscanf` (`__isoc23_*`), which differ from
 * the C99 forms only in reading a `0b` binary prefix (base 0 or 2, `%i`, `%b`). Each such reference
 * in `uws_linux_<arch>_<abi>.node` is pointed at the C99 function of the same name (its name is the
 * tail of the C23 name in the string table, so only the symbol's name offset changes), made
 * unversioned, and the GLIBC_2.38 requirement is marked weak (VER_FLG_WEAK: the loader no longer
 * refuses the file for it). Every edit is a fixed-size field in place; no byte is added. A reference
 * to a too-new version that is not in REBIND stops the script, naming it, and changes nothing.
 *
 * Usage: node --import tsx scripts/uws-glibc.ts [--check]   (--check: report, change nothing; exit
 * 1 when a binary for this machine's glibc still needs the change).
 */
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** C23 symbol → the C99 symbol it is pointed at (always a suffix of the C23 name). */
export const REBIND: Readonly<Record<string, string>> = {
  __isoc23_strtol: 'strtol',
  __isoc23_strtoul: 'strtoul',
  __isoc23_strtoull: 'strtoull',
  __isoc23_sscanf: 'sscanf',
};

const VER_FLG_WEAK = 0x2;
const VER_NDX_GLOBAL = 1;
const SHT_DYNSYM = 11;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;

/** One `GLIBC_x.y` requirement of an ELF file (its vernaux entry). */
export interface GlibcNeed {
  version: string;
  /** Version index the symbols' .gnu.version entries refer to. */
  index: number;
  weak: boolean;
  /** File offset of the vernaux entry. */
  offset: number;
}

/** What an ELF file needs from glibc: its version requirements and the symbols bound to each. */
export interface ElfGlibcView {
  needs: GlibcNeed[];
  /** Undefined dynamic symbols by the version index they require: name, symbol entry offset. */
  symbols: Map<number, { name: string; entry: number; versymOffset: number; nameOffset: number }[]>;
}

const cstr = (buf: Buffer, at: number): string => buf.toString('latin1', at, buf.indexOf(0, at));

/**
 * Reads the glibc version requirements of a 64-bit little-endian ELF shared object.
 * @throws Error when the file is not one, or has no dynamic symbol table.
 */
export function readGlibcNeeds(elf: Buffer): ElfGlibcView {
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) {
    throw new Error('not a 64-bit little-endian ELF file');
  }
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const sections = Array.from({ length: shnum }, (_, i) => {
    const at = shoff + i * shentsize;
    return {
      type: elf.readUInt32LE(at + 4),
      offset: Number(elf.readBigUInt64LE(at + 0x18)),
      size: Number(elf.readBigUInt64LE(at + 0x20)),
      link: elf.readUInt32LE(at + 0x28),
      info: elf.readUInt32LE(at + 0x2c),
    };
  });
  const dynsym = sections.find((s) => s.type === SHT_DYNSYM);
  const versym = sections.find((s) => s.type === SHT_GNU_VERSYM);
  const verneed = sections.find((s) => s.type === SHT_GNU_VERNEED);
  if (!dynsym) throw new Error('no dynamic symbol table');
  const dynstr = sections[dynsym.link]?.offset ?? 0;
  const needs: GlibcNeed[] = [];
  if (verneed) {
    const strtab = sections[verneed.link]?.offset ?? 0;
    let vn = verneed.offset;
    for (let i = 0; i < verneed.info; i++) {
      const cnt = elf.readUInt16LE(vn + 2);
      let aux = vn + elf.readUInt32LE(vn + 8);
      for (let j = 0; j < cnt; j++) {
        const name = cstr(elf, strtab + elf.readUInt32LE(aux + 8));
        if (name.startsWith('GLIBC_')) {
          needs.push({
            version: name.slice(6),
            index: elf.readUInt16LE(aux + 6),
            weak: (elf.readUInt16LE(aux + 4) & VER_FLG_WEAK) !== 0,
            offset: aux,
          });
        }
        aux += elf.readUInt32LE(aux + 12);
      }
      vn += elf.readUInt32LE(vn + 12);
    }
  }
  const symbols: ElfGlibcView['symbols'] = new Map();
  if (versym) {
    for (let i = 1; i < dynsym.size / 24; i++) {
      const entry = dynsym.offset + i * 24;
      if (elf.readUInt16LE(entry + 6) !== 0) continue; // defined here
      const versymOffset = versym.offset + i * 2;
      const index = elf.readUInt16LE(versymOffset) & 0x7fff;
      const nameOffset = elf.readUInt32LE(entry);
      const list = symbols.get(index) ?? [];
      list.push({ name: cstr(elf, dynstr + nameOffset), entry, versymOffset, nameOffset });
      symbols.set(index, list);
    }
  }
  return { needs, symbols };
}

/** -1, 0, 1 as glibc version `a` is older than, equal to, newer than `b` ("2.36" vs "2.38"). */
export function compareGlibc(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/**
 * Returns a copy of `elf` that loads on glibc `runtime`, or undefined when it already does.
 * @throws Error naming the symbols when a too-new requirement has a symbol outside REBIND.
 */
export function rebindForGlibc(elf: Buffer, runtime: string): Buffer | undefined {
  const view = readGlibcNeeds(elf);
  const tooNew = view.needs.filter((n) => compareGlibc(n.version, runtime) > 0 && !n.weak);
  const bound = view.needs
    .filter((n) => compareGlibc(n.version, runtime) > 0)
    .flatMap((n) => view.symbols.get(n.index) ?? []);
  if (tooNew.length === 0 && bound.length === 0) return undefined;
  const unknown = bound.filter((s) => !(s.name in REBIND));
  if (unknown.length > 0) {
    throw new Error(
      `needs ${unknown.map((s) => s.name).join(', ')} from a glibc newer than ${runtime}; no C99 equivalent is known`,
    );
  }
  const out = Buffer.from(elf);
  for (const s of bound) {
    const target = REBIND[s.name] as string;
    out.writeUInt32LE(s.nameOffset + s.name.length - target.length, s.entry);
    out.writeUInt16LE(VER_NDX_GLOBAL, s.versymOffset);
  }
  for (const n of tooNew) out.writeUInt16LE(out.readUInt16LE(n.offset + 4) | VER_FLG_WEAK, n.offset + 4);
  return out;
}

function main(): void {
  const check = process.argv.includes('--check');
  const runtime = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } })?.header
    ?.glibcVersionRuntime;
  if (process.platform !== 'linux' || !runtime) return; // not glibc Linux: nothing this can do
  let pkgDir: string;
  try {
    // The package's main file (uws.js) sits beside its binaries; its exports hide package.json.
    pkgDir = dirname(createRequire(import.meta.url).resolve('uWebSockets.js'));
  } catch {
    return; // not installed (e.g. a production install of another package set)
  }
  const binaries = readdirSync(pkgDir).filter(
    (f) => f.startsWith(`uws_linux_${process.arch}_`) && f.endsWith('.node'),
  );
  let pending = 0;
  for (const name of binaries) {
    const file = join(pkgDir, name);
    const patched = rebindForGlibc(readFileSync(file), runtime);
    if (!patched) continue;
    pending++;
    if (check) {
      console.log(`[uws-glibc] ${name} needs a glibc newer than ${runtime}: run scripts/uws-glibc.ts`);
      continue;
    }
    // A new file renamed over the old one: a process that has the old one mapped keeps its pages.
    writeFileSync(`${file}.tmp`, patched, { mode: 0o755 });
    renameSync(`${file}.tmp`, file);
    console.log(`[uws-glibc] ${name}: C23 strto*/sscanf references bound to glibc ${runtime}'s C99 forms`);
  }
  if (check && pending > 0) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
