// The package as npm would publish it: `npm pack` makes a tarball of exactly the module, its
// types and its README; unpacked into a project's node_modules it imports by its name, and
// every export of the module is declared in parley.d.ts (and nothing declared is missing).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));

test('npm pack holds the module, its types and README, and the package imports by name', (t) => {
  const work = mkdtempSync(join(tmpdir(), 'parley-pack-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', work],
                           { cwd: packageDir, encoding: 'utf8', env: { ...process.env, npm_config_cache: join(work, 'cache') } });
  const [packed] = JSON.parse(out);
  assert.equal(packed.name, 'parley-client');
  assert.equal(packed.filename, `parley-client-${manifest.version}.tgz`);
  assert.deepEqual(packed.files.map((f) => f.path).sort(), ['README.md', 'package.json', 'parley.d.ts', 'parley.js']);

  const installed = join(work, 'app', 'node_modules', 'parley-client');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', installed, '--strip-components=1']);
  writeFileSync(join(work, 'app', 'check.mjs'),
                "import * as parley from 'parley-client';\nconsole.log(JSON.stringify(Object.keys(parley).sort()));\n");
  const runtime = JSON.parse(execFileSync(process.execPath, [join(work, 'app', 'check.mjs')], { encoding: 'utf8' }));
  assert.ok(runtime.includes('ParleyClient'));

  const types = readFileSync(join(installed, 'parley.d.ts'), 'utf8');
  const declared = [...types.matchAll(/^export (?:class|function|const) (\w+)/gm)].map((m) => m[1]).sort();
  assert.deepEqual(declared, runtime, 'parley.d.ts declares exactly the module\'s exports');
});
