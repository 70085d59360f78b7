// A tiny static file server for the built preview (node:http, no dependencies), on 127.0.0.1.
//   node npm/preview/serve.mjs [--dir DIR] [--port N]     (port 0: any free port)
// Prints the page's URL on stdout.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
  '.data': 'application/octet-stream',
  // Served as the bytes they are (no Content-Encoding): PGlite unpacks the tarball itself.
  '.gz': 'application/gzip',
};

/** Serves `dir` on 127.0.0.1; resolves to the http.Server once listening. */
export function serve(dir, { port = 0, host = '127.0.0.1' } = {}) {
  const root = resolve(dir);
  const server = createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return res.writeHead(405).end();
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      return res.writeHead(400).end();
    }
    if (path.endsWith('/')) path += 'index.html';
    const file = resolve(join(root, path));
    if (file !== root && !file.startsWith(root + sep)) return res.writeHead(403).end();
    let st;
    try {
      st = statSync(file);
    } catch {
      return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
    if (!st.isFile()) return res.writeHead(404).end();
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': st.size,
      // Always revalidate; the service worker is what makes the page work offline.
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => ok(server));
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { dir: { type: 'string', default: fileURLToPath(new URL('./dist', import.meta.url)) }, port: { type: 'string', default: '8787' } },
  });
  const port = Number(values.port);
  let server;
  try {
    server = await serve(values.dir, { port });
  } catch (e) {
    console.error(`preview: cannot listen on 127.0.0.1:${port}: ${e.code ?? e.message}; pick another with --port N (0: any free port)`);
    process.exit(2);
  }
  console.log(`http://127.0.0.1:${server.address().port}/`);
  console.error('preview: serving', values.dir, '(Ctrl-C to stop)');
}
