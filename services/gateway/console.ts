/**
 * The browser console at /console/ (operator portal and ops console, console/README.md), served by the
 * gateway from the folder scripts/build-console.ts writes (GATEWAY_CONSOLE_DIR, default .build/console/).
 *
 * Every answer under /console carries a strict Content-Security-Policy (only this origin's scripts and
 * styles, no inline code, no framing, no plugins, no <base>) and `X-Content-Type-Options: nosniff`;
 * index.html is `no-store` (a deploy is seen at once), the other files `no-cache` (revalidated: their
 * names carry no content hash). `/console` redirects to `/console/` so the page's relative asset
 * URLs resolve under it. When the bundle was not built the answer is 503 with how to build it (an
 * HTML page for a browser, the API's error body otherwise) rather than the API's 404.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The console's Content-Security-Policy: nothing but this origin's own scripts and styles. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/** What to run when the bundle is missing. */
const BUILD_HINT = 'node --import tsx scripts/build-console.ts (npm start and npm test run it)';

function notBuilt(req: FastifyRequest, reply: FastifyReply) {
  reply.code(503).header('cache-control', 'no-store').header('retry-after', '5');
  if ((req.headers.accept ?? '').includes('text/html'))
    return reply
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>` +
          `<body><main><h1>Console not built</h1><p>The console's bundle is missing on this server. ` +
          `Build it with <code>${BUILD_HINT}</code>, then reload.</p></main></body></html>`,
      );
  return reply.send({ error: `Console not built: run ${BUILD_HINT}`, success: false });
}

/**
 * Registers /console and /console/* on `app` (an encapsulated plugin: its headers and 404 apply there
 * only), serving the files of `dir` (absolute path).
 */
export function registerConsole(app: FastifyInstance, dir: string): void {
  const built = () => existsSync(join(dir, 'index.html'));
  app.register(
    async (scope) => {
      // Checked on every request, so a bundle built after the gateway started is served at once.
      scope.addHook('onRequest', async (req, reply) => {
        if (!built()) return notBuilt(req, reply);
      });
      scope.addHook('onSend', async (_req, reply, payload) => {
        reply.header('content-security-policy', CONSOLE_CSP);
        reply.header('x-content-type-options', 'nosniff');
        reply.header('referrer-policy', 'no-referrer');
        return payload;
      });
      scope.setNotFoundHandler((_req, reply) => reply.code(404).send({ error: 'Not Found', success: false }));
      scope.get('/', { prefixTrailingSlash: 'no-slash' }, (_req, reply) => reply.redirect('/console/', 301));
      scope.register(fastifyStatic, {
        root: dir,
        prefix: '/',
        index: false,
        wildcard: true,
        cacheControl: false,
        etag: true,
        setHeaders: (res, path) =>
          res.setHeader('cache-control', path.endsWith('index.html') ? 'no-store' : 'no-cache'),
      });
      scope.get('/', { prefixTrailingSlash: 'slash' }, (_req, reply) => reply.sendFile('index.html'));
    },
    { prefix: '/console' },
  );
}
