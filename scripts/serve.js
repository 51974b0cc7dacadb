// A small static file server for the built page (and the browser tests): no dependencies,
// loopback only, correct MIME types for .wasm and .mjs, and the two headers that make the page
// cross-origin isolated, so that the package runs on threads there (docs/threads.md); the
// browser tests also serve without them (isolated: false), as a host that cannot set headers.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2', '.woff': 'font/woff',
  '.ttf': 'font/ttf', '.ico': 'image/x-icon',
};

export const ISOLATION_HEADERS = Object.freeze({
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
});

export function serve(root, port = 0, host = '127.0.0.1', { isolated = true } = {}) {
  const headers = isolated ? ISOLATION_HEADERS : {};
  const base = resolve(root);
  const server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url, 'http://x').pathname);
    let file = normalize(join(base, path));
    if (!file.startsWith(base)) {
      response.writeHead(403).end();
      return;
    }
    try {
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      await stat(file);
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(200, { ...headers, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(response);
  });
  return new Promise((done) => server.listen(port, host, () => done(server)));
}

// `node scripts/serve.js DIR` serves DIR on $PORT (default 8080) and prints the URL.
if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2] ?? 'build/site';
  const port = Number(process.env.PORT ?? 8080);
  const server = await serve(root, port, process.env.HOST ?? '127.0.0.1');
  const { port: actual } = server.address();
  console.log(`attention-wasm page: http://localhost:${actual}/`);
}
