// What `npm install memloom` costs a user: packs this package (`npm pack`) and installs the
// tarball into fresh temp projects, then counts the installed packages and their size on disk:
//   core       memloom alone (what `import { chunk, embed } from 'memloom'` and the embedded
//              store need; the optional peers are not installed)
//   full       memloom + pg + @modelcontextprotocol/sdk (the CLI on a server store, `memloom mcp`)
//   before     the same for the package as it was before its heavy dependencies became optional
//              peers: memloom + pg + the MCP SDK as plain dependencies (the same tarball with
//              them added back), the baseline of this run
//   with-tar   core, but unpacking the store template with `tar` (and its five dependencies) as
//              before modern-tar replaced it: the same tarball with that dependency swapped back
// Needs the npm registry (dependencies are downloaded); prints a table and JSON.
//   node bench/install-size.js
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const tmp = mkdtempSync(join(tmpdir(), 'memloom-install-'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

function sizeOf(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) n += statSync(join(e.parentPath ?? e.path, e.name)).size;
  }
  return n;
}

function install(name, specs) {
  const dir = join(tmp, name);
  execFileSync('mkdir', ['-p', dir]);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `try-${name}`, version: '1.0.0', private: true, type: 'module' }));
  const started = Date.now();
  npm(['install', '--no-audit', '--no-fund', '--ignore-scripts', ...specs], dir);
  const seconds = (Date.now() - started) / 1000;
  const tree = JSON.parse(npm(['ls', '--all', '--json'], dir));
  const names = new Set();
  const walk = (deps) => {
    for (const [n, d] of Object.entries(deps ?? {})) {
      if (d.missing || d.version === undefined) continue; // an optional peer not installed
      names.add(`${n}@${d.version}`);
      walk(d.dependencies);
    }
  };
  walk(tree.dependencies);
  // The biggest packages on disk.
  const nm = join(dir, 'node_modules');
  const top = [];
  for (const e of readdirSync(nm)) {
    if (e.startsWith('.')) continue;
    const subs = e.startsWith('@') ? readdirSync(join(nm, e)).map((x) => `${e}/${x}`) : [e];
    for (const p of subs) top.push([p, sizeOf(join(nm, p))]);
  }
  top.sort((a, b) => b[1] - a[1]);
  return { name, packages: names.size, bytes: sizeOf(nm), seconds, list: [...names].sort(), top: top.slice(0, 4) };
}

try {
  const tarball = join(tmp, JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], pkgDir))[0].filename);
  // The baseline: the same tarball with pg and the MCP SDK as dependencies again.
  const before = join(tmp, 'before');
  execFileSync('mkdir', ['-p', before]);
  execFileSync('tar', ['-xzf', tarball, '-C', before]);
  const bpkg = JSON.parse(readFileSync(join(before, 'package/package.json'), 'utf8'));
  for (const n of ['pg', '@modelcontextprotocol/sdk']) bpkg.dependencies[n] = pkg.peerDependencies[n];
  writeFileSync(join(before, 'package/package.json'), JSON.stringify(bpkg, null, 2));
  // (Packed into its own folder: the same file name would overwrite the tarball under test.)
  const beforeTgz = join(before, JSON.parse(npm(['pack', '--json', '--pack-destination', before], join(before, 'package')))[0].filename);

  // The same tarball with `tar` instead of modern-tar.
  const withTar = join(tmp, 'with-tar');
  execFileSync('mkdir', ['-p', withTar]);
  execFileSync('tar', ['-xzf', tarball, '-C', withTar]);
  const tpkg = JSON.parse(readFileSync(join(withTar, 'package/package.json'), 'utf8'));
  delete tpkg.dependencies['modern-tar'];
  tpkg.dependencies.tar = '^7.5.23';
  writeFileSync(join(withTar, 'package/package.json'), JSON.stringify(tpkg, null, 2));
  const withTarTgz = join(withTar, JSON.parse(npm(['pack', '--json', '--pack-destination', withTar], join(withTar, 'package')))[0].filename);

  const rows = [
    install('core', [tarball]),
    install('full', [tarball, `pg@${pkg.peerDependencies.pg}`, `@modelcontextprotocol/sdk@${pkg.peerDependencies['@modelcontextprotocol/sdk']}`]),
    install('before', [beforeTgz]),
    install('with-tar', [withTarTgz]),
  ];
  console.log('install     packages   MB on disk   seconds');
  for (const r of rows) console.log(`${r.name.padEnd(10)} ${String(r.packages).padStart(9)} ${(r.bytes / 1e6).toFixed(1).padStart(12)} ${r.seconds.toFixed(1).padStart(9)}`);
  const [core, , base, tarRow] = rows;
  console.log(`core / before: ${(core.packages / base.packages).toFixed(2)}x the packages, ${(core.bytes / base.bytes).toFixed(2)}x the bytes`);
  console.log(`core / with-tar: ${core.packages - tarRow.packages} packages, ${((core.bytes - tarRow.bytes) / 1e6).toFixed(1)} MB`);
  console.log(`core packages: ${core.list.join(', ')}`);
  for (const r of rows) console.log(`${r.name} biggest: ${r.top.map(([p, n]) => `${p} ${(n / 1e6).toFixed(1)} MB`).join(', ')}`);
  console.log(JSON.stringify(rows.map(({ list, top, ...r }) => r)));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
