/**
 * Runs the compose deployment's reverse proxy configuration (ops/nginx/casino.conf.template) with
 * a local nginx (Debian's `nginx`, installed by scripts/ensure-deps.sh --proxy) for the e2e tier.
 * The template's `${NAME}` settings are filled the way the official nginx image's templates
 * mechanism does (envsubst of the defined variables), and the result is included in a minimal
 * main configuration under a temporary prefix, so nothing of the system's nginx is used.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, type Service, startProcess } from './processes.ts';

export const PROXY_TEMPLATE = join(ROOT, 'ops/nginx/casino.conf.template');
export const NGINX_BIN = '/usr/sbin/nginx';

/** The `${NAME}` settings the template uses, in order of first use. */
export function templateVariables(text: string): string[] {
  return [...new Set([...text.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => m[1] as string))];
}

/**
 * `text` with every `${NAME}` replaced by `values[NAME]`.
 * @throws Error naming the settings `values` lacks (an unfilled one would reach nginx verbatim).
 */
export function fillTemplate(text: string, values: Readonly<Record<string, string>>): string {
  const missing = templateVariables(text).filter((v) => values[v] === undefined);
  if (missing.length > 0) throw new Error(`no value for ${missing.join(', ')}`);
  return text.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => values[name] as string);
}

export interface LocalNginx {
  readonly service: Service;
  /** Stops nginx (SIGQUIT: graceful) and removes its prefix directory. */
  stop(): Promise<void>;
}

/**
 * Starts nginx in the foreground with the filled template.
 * @throws Error when `nginx -t` refuses the configuration (with its output).
 */
export function startNginx(values: Readonly<Record<string, string>>): LocalNginx {
  const prefix = mkdtempSync(join(tmpdir(), 'casino-nginx-'));
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(prefix, d));
  writeFileSync(join(prefix, 'casino.conf'), fillTemplate(readFileSync(PROXY_TEMPLATE, 'utf8'), values));
  const root = process.getuid?.() === 0;
  writeFileSync(
    join(prefix, 'nginx.conf'),
    [
      // As root, workers would run as `nobody` and could not write the temporary directories.
      root ? 'user root;' : '',
      'daemon off;',
      'worker_processes 1;',
      `pid ${join(prefix, 'nginx.pid')};`,
      'error_log stderr warn;',
      'events { worker_connections 4096; }',
      'http {',
      `  client_body_temp_path ${join(prefix, 'body')};`,
      `  proxy_temp_path ${join(prefix, 'proxy')};`,
      `  fastcgi_temp_path ${join(prefix, 'fastcgi')};`,
      `  uwsgi_temp_path ${join(prefix, 'uwsgi')};`,
      `  scgi_temp_path ${join(prefix, 'scgi')};`,
      '  access_log off;',
      `  include ${join(prefix, 'casino.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const args = ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', 'stderr'];
  const check = spawnSync(NGINX_BIN, ['-t', ...args], { encoding: 'utf8' });
  if (check.status !== 0) {
    rmSync(prefix, { recursive: true, force: true });
    throw new Error(`nginx -t refused the configuration:\n${check.stderr}`);
  }
  const service = startProcess(NGINX_BIN, args, {});
  return {
    service,
    async stop() {
      await service.stop('SIGQUIT', 5_000);
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
