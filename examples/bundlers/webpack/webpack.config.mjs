// webpack recipe: `webpack --config webpack.config.mjs` (or the Node API). ESM output; PGlite's
// Node-only code paths (node:* and a few bare Node modules, imported lazily and never taken in a
// browser) are left out.
import { fileURLToPath } from 'node:url';

const nodeOnly = ['fs', 'zlib', 'stream', 'stream/promises', 'path', 'crypto', 'url', 'module', 'os', 'child_process'];

export default {
  mode: 'production',
  context: fileURLToPath(new URL('.', import.meta.url)),
  entry: { app: './app.js' },
  output: { path: fileURLToPath(new URL('./dist', import.meta.url)), module: true, clean: true },
  experiments: { outputModule: true },
  resolve: { fallback: Object.fromEntries(nodeOnly.map((m) => [m, false])) },
  externals: [({ request }, callback) => (request.startsWith('node:') ? callback(null, `module ${request}`) : callback())],
  performance: { hints: false },
};
