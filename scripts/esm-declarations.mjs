// Writes js/*.d.mts, the ES module faces of the hand-written declarations js/*.d.ts.
//
// The package has no "type": "module", so TypeScript reads js/*.d.ts as CommonJS
// declarations. That is right for `require('toolhost')` (js/node.cjs), and wrong for
// `import`: an ES module project would see a default export js/node.mjs lacks, and the
// peers' types (@ag-ui/client, @modelcontextprotocol/sdk) would resolve through their
// "require" condition inside toolhost's declarations and through "import" in the user's
// code: two declarations of one class, which TypeScript refuses to mix. package.json's
// "exports" gives the import condition these files, and every other the sources.
//
// - js/index.d.mts re-exports js/index.d.ts (named exports only: no default). The core's
//   classes stay declared once, so a CommonJS file that `await import('toolhost/mcp')`s
//   can hand it a registry it got from `require('toolhost')`.
// - js/ag-ui.d.mts, js/lit.d.mts, js/mcp.d.mts are their sources in ES module form: the
//   same text, so that the peers' types they import resolve through "import". They
//   reach the core through './index.js', the one declaration.
// js/mcp-mount.d.ts, which the core refers to, imports the SDK's Client with
// resolution-mode "import" itself (toolhost/mcp is import-only).
// __test__/types-module-formats.test.mjs fails when a file is not what this writes.
//
//   node scripts/esm-declarations.mjs     writes them again after editing js/*.d.ts
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const JS = fileURLToPath(new URL('../js/', import.meta.url))

/** The subpaths whose declarations import a peer's types, and get an ES module copy. */
const ENTRIES = ['ag-ui', 'lit', 'mcp']

const header = (from) => `// Generated from ${from} by scripts/esm-declarations.mjs: do not edit.\n` +
  '// `node scripts/esm-declarations.mjs` writes it again.\n\n'

/** Every file this script writes: a Map from its name in js/ to its text. */
export function esmDeclarations() {
  const files = new Map([['index.d.mts', `${header('js/index.d.ts')}export * from './index.js'\n`]])
  for (const name of ENTRIES) {
    files.set(`${name}.d.mts`, header(`js/${name}.d.ts`) + readFileSync(join(JS, `${name}.d.ts`), 'utf8'))
  }
  return files
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [name, text] of esmDeclarations()) writeFileSync(join(JS, name), text)
}
