// Bundles one test file for the browser with esbuild, in memory.
//
// - `import ... from 'toolhost'` resolves through the package's own package.json
//   `exports` (a self-reference) with the `browser` condition.
// - Node built-ins: node:test, node:assert(/strict), node:timers/promises and
//   node:events go to the shims in ../shims; any other built-in becomes a stub whose
//   exports throw when used (shims/node-only-stub.mjs), so a file importing node:fs
//   for one test still loads and only that test fails, saying it is Node-only.
// - `import.meta.url` in every bundled module is its own file's URL on the test
//   server (/path/in/repo.js), not the bundle's, so `new URL('x.wasm', import.meta.url)`
//   finds the file next to the module that asked for it.
import { builtinModules } from 'node:module'
import { readFile } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const SHIMS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'shims')

/** Built-in name (without node:) -> shim file. */
const SHIMS = {
  test: 'node-test.mjs',
  assert: 'assert.mjs',
  'assert/strict': 'assert-strict.mjs',
  'timers/promises': 'timers-promises.mjs',
  events: 'events.mjs',
}

const BUILTINS = new Set(builtinModules.filter((name) => !name.startsWith('_')))
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
const BARE_BUILTIN = new RegExp(`^(${[...BUILTINS].map(escapeRegExp).join('|')})$`)

/** An ES module whose exports are those of Node's `name`, each a Node-only stub. */
async function nodeOnlyModule(name) {
  const real = await import(`node:${name}`)
  const names = Object.keys(real).filter((key) => key !== 'default' && /^[A-Za-z_$][\w$]*$/.test(key))
  const lines = [
    `import { nodeOnly } from ${JSON.stringify(join(SHIMS_DIR, 'node-only-stub.mjs'))}`,
    `const m = ${JSON.stringify(`node:${name}`)}`,
    'export default nodeOnly(m, "default")',
    ...names.map((key) => `export const ${key} = nodeOnly(m, ${JSON.stringify(key)})`),
  ]
  return lines.join('\n')
}

/** Routes Node built-ins to shims or Node-only stubs. */
const nodeBuiltins = {
  name: 'node-builtins',
  setup(build) {
    const shimOrStub = (name) => {
      if (SHIMS[name]) return { path: join(SHIMS_DIR, SHIMS[name]) }
      if (BUILTINS.has(name)) return { path: name, namespace: 'node-only' }
      return undefined
    }
    build.onResolve({ filter: /^node:/ }, (args) => shimOrStub(args.path.slice('node:'.length)))
    build.onResolve({ filter: /^node-only:/ }, (args) => ({ path: args.path.slice('node-only:'.length), namespace: 'node-only' }))
    // A bare `fs` or `events` (from a dependency): an installed npm package of that
    // name wins, as with other browser bundlers; otherwise the shim or the stub.
    build.onResolve({ filter: BARE_BUILTIN }, async (args) => {
      if (args.pluginData?.probing) return undefined
      const found = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { probing: true } })
      return found.errors.length ? shimOrStub(args.path) : undefined
    })
    build.onLoad({ filter: /.*/, namespace: 'node-only' }, async (args) => ({
      contents: await nodeOnlyModule(args.path),
      resolveDir: SHIMS_DIR,
      loader: 'js',
    }))
  },
}

/** The variable every bundled module's `import.meta.url` is replaced with. */
const META_URL = '__harness_import_meta_url'

/** Rewrites import.meta.url as sources load. */
function importMetaUrl(repoRoot) {
  return {
    name: 'import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?js$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8')
        if (!source.includes('import.meta.url')) return undefined
        const urlPath = `/${relative(repoRoot, args.path).split(sep).join('/')}`
        // On the first line, so line numbers in source maps stay right.
        const prefix = `var ${META_URL} = new URL(${JSON.stringify(urlPath)}, globalThis.location.href).href;`
        return { contents: prefix + source, loader: 'js' }
      })
    },
  }
}

/** The bundle's entry: the page runtime, which imports the test file. */
function harnessEntry(testFile, pageOptions) {
  return {
    name: 'harness-entry',
    setup(build) {
      build.onResolve({ filter: /^harness-entry$/ }, () => ({ path: 'entry', namespace: 'harness-entry' }))
      build.onLoad({ filter: /.*/, namespace: 'harness-entry' }, () => ({
        contents: [
          `import { runFile } from ${JSON.stringify(join(SHIMS_DIR, 'page.mjs'))}`,
          // The engine loads before the file, as a page awaits it before using tools.
          "import { ready } from 'toolhost'",
          // A dynamic import, so an error thrown while the file loads is reported.
          `runFile(() => ready().then(() => import(${JSON.stringify(testFile)})), ${JSON.stringify(pageOptions)})`,
        ].join('\n'),
        resolveDir: dirname(testFile),
        loader: 'js',
      }))
    },
  }
}

/**
 * Bundles `testFile`. Returns the output files keyed by their path relative to the
 * bundle directory ({ contents, sourceMap? }), or throws an Error whose message lists
 * esbuild's errors.
 */
export async function bundleTestFile({ testFile, repoRoot, pageOptions }) {
  // Output paths are only used to name files and relate source maps; nothing is written.
  const outdir = join(repoRoot, '.browser-tests-bundle')
  let result
  try {
    result = await esbuild.build({
      entryPoints: { entry: 'harness-entry' },
      absWorkingDir: repoRoot,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'browser',
      conditions: ['browser'],
      outdir,
      chunkNames: 'chunks/[name]-[hash]',
      write: false,
      sourcemap: 'linked',
      // Function and class names stay as written (bundling would rename clashing
      // ones): tests and assert messages read them, as in Node.
      keepNames: true,
      define: { 'import.meta.url': META_URL },
      logLevel: 'silent',
      plugins: [harnessEntry(testFile, pageOptions), nodeBuiltins, importMetaUrl(repoRoot)],
    })
  } catch (error) {
    const messages = error.errors?.length
      ? error.errors.map((e) => (e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ${e.text}` : e.text))
      : [error.message]
    throw new Error(`esbuild could not bundle the file:\n${messages.join('\n')}`)
  }
  const files = new Map()
  for (const output of result.outputFiles) {
    files.set(relative(outdir, output.path).split(sep).join('/'), { contents: output.contents })
  }
  for (const [name, file] of files) {
    if (name.endsWith('.js') && files.has(`${name}.map`)) file.sourceMap = { json: files.get(`${name}.map`).contents, dir: dirname(join(outdir, name)) }
  }
  return files
}
