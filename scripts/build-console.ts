/**
 * Builds the browser console (operator portal and ops console, console/README.md) into a folder the
 * gateway serves at /console/ (GATEWAY_CONSOLE_DIR, default .build/console/):
 *
 *   node --import tsx scripts/build-console.ts [OUT_DIR]
 *
 * console/src/main.tsx (Preact) is bundled by esbuild into one minified ES module `console.js` with
 * its source map; console/index.html and console/console.css are copied beside it. Nothing is loaded
 * from another origin (docs/decisions/console/0001-preact-and-esbuild.md). Exit status 1 when the
 * bundle fails (esbuild's messages on stderr).
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');

/** The default output folder (git-ignored), where the gateway looks unless told otherwise. */
export const CONSOLE_OUT_DIR = resolve(ROOT, '.build', 'console');

/**
 * Bundles the console into `outDir` (emptied first): index.html, console.css, console.js and
 * console.js.map. Resolves with the bundle's size in bytes.
 * @throws Error from esbuild when the sources do not compile.
 */
export async function buildConsole(outDir: string = CONSOLE_OUT_DIR): Promise<{ bytes: number }> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const result = await build({
    entryPoints: [resolve(ROOT, 'console', 'src', 'main.tsx')],
    outfile: resolve(outDir, 'console.js'),
    bundle: true,
    minify: true,
    sourcemap: true,
    format: 'esm',
    target: ['es2022'],
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  await copyFile(resolve(ROOT, 'console', 'index.html'), resolve(outDir, 'index.html'));
  await copyFile(resolve(ROOT, 'console', 'console.css'), resolve(outDir, 'console.css'));
  const out = Object.entries(result.metafile.outputs).find(([p]) => p.endsWith('console.js'));
  return { bytes: out?.[1].bytes ?? 0 };
}

if (import.meta.filename === process.argv[1] || process.argv[1]?.endsWith('build-console.ts')) {
  const outDir = resolve(process.argv[2] ?? CONSOLE_OUT_DIR);
  try {
    const { bytes } = await buildConsole(outDir);
    process.stdout.write(`console built: ${outDir} (console.js ${bytes} bytes)\n`);
  } catch (e) {
    process.stderr.write(`console build failed: ${(e as Error).message}\n`);
    process.exit(1);
  }
}
