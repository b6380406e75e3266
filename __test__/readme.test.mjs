// Every fenced code block of README.md in js, cjs or ts runs (or type-checks) as
// written, so the README cannot rot (issue 15). The info string after the language
// says what to do with a block:
//
//   js, cjs          written to its own .mjs / .cjs file and run with node; it must exit
//                    0 within 60 s. Each `// => text` comment after a statement is an
//                    expectation: `text` must appear in the output, in order.
//   js file=NAME     written as NAME beside the others before anything runs (a module
//                    a later block imports, or serves); not run itself
//   js background    started first and kept running while the later blocks run (a
//                    server they connect to); the test waits for its first line of
//                    output, and stops it at the end
//   js norun         only parsed (node --check): code for a browser page
//   js fragment      not checked: a deliberately partial block (the shape of a call)
//   ts               type-checked together with tsc --strict (not run)
//
// The blocks run from target/readme-snippets, where node_modules/toolhost links to
// this checkout (so `import 'toolhost'` and `npx toolhost` resolve to it as they would
// in a project that installed it). PORT is a free port, for servers the blocks start.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { delimiter, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const DIR = join(ROOT, 'target', 'readme-snippets')
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const LANGS = new Set(['js', 'cjs', 'ts'])
const TAGS = new Set(['norun', 'fragment', 'background'])

/** The fenced blocks: `{ line, lang, tags, file, code }`. */
function blocks(markdown) {
  const out = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i])
    if (!open) continue
    const start = i
    const body = []
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i])
    if (i === lines.length) throw new Error(`README.md:${start + 1}: a code block is not closed`)
    const [lang, info] = [open[1], open[2].trim()]
    if (!LANGS.has(lang)) continue
    const words = info === '' ? [] : info.split(/\s+/)
    const file = words.find((w) => w.startsWith('file='))?.slice(5)
    const tags = words.filter((w) => !w.startsWith('file='))
    for (const t of tags) if (!TAGS.has(t)) throw new Error(`README.md:${start + 1}: unknown tag '${t}' (known: ${[...TAGS].join(', ')}, file=NAME)`)
    out.push({ line: start + 1, lang, tags, file, code: body.join('\n') + '\n' })
  }
  return out
}

/** The `// => text` expectations of a block, in order. */
function expectations(code) {
  return [...code.matchAll(/\/\/ => (.+)$/gm)].map((m) => m[1].trim())
}

function freePort() {
  return new Promise((res, rej) => {
    const server = createServer()
    server.once('error', rej)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => res(port))
    })
  })
}

function run(file, env, timeoutMs = 60_000) {
  return new Promise((res) => {
    const child = spawn(process.execPath, [file], { cwd: DIR, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      res({ code, signal, out })
    })
  })
}

/** Starts a background block; resolves the child once it printed a line. */
function start(file, env) {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [file], { cwd: DIR, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      rej(new Error(`${file} printed nothing within 30 s:\n${out}`))
    }, 30_000)
    child.stdout.on('data', (d) => {
      out += d
      if (out.includes('\n')) {
        clearTimeout(timer)
        res(child)
      }
    })
    child.stderr.on('data', (d) => (out += d))
    child.on('exit', (code) => {
      clearTimeout(timer)
      rej(new Error(`${file} exited (code ${code}) before the blocks that need it ran:\n${out}`))
    })
  })
}

const all = blocks(README)
const name = (b, k) => b.file ?? `block-${String(k).padStart(2, '0')}-line-${b.line}.${b.lang === 'cjs' ? 'cjs' : b.lang === 'ts' ? 'ts' : 'mjs'}`

test('README.md has code blocks to check, each tagged with something known', () => {
  assert.ok(all.filter((b) => b.tags.length === 0 && !b.file).length >= 20, 'at least 20 blocks run as written')
  const fragments = all.filter((b) => b.tags.includes('fragment'))
  assert.ok(fragments.length <= 3, `at most 3 partial blocks; found ${fragments.map((b) => b.line).join(', ')}`)
})

test('every README block runs or type-checks as written', { timeout: 10 * 60_000 }, async (t) => {
  rmSync(DIR, { recursive: true, force: true })
  mkdirSync(join(DIR, 'node_modules', '.bin'), { recursive: true })
  // A junction on Windows (a directory link that needs no privilege); ignored elsewhere.
  symlinkSync(ROOT, join(DIR, 'node_modules', 'toolhost'), 'junction')
  if (process.platform === 'win32') {
    // What npm writes there on Windows: a .cmd that runs the bin with node.
    writeFileSync(join(DIR, 'node_modules', '.bin', 'toolhost.cmd'), `@node "%~dp0\\..\\toolhost\\js\\cli.mjs" %*\r\n`)
  } else {
    symlinkSync(join(ROOT, 'js', 'cli.mjs'), join(DIR, 'node_modules', '.bin', 'toolhost'))
  }
  writeFileSync(join(DIR, 'package.json'), JSON.stringify({ name: 'readme-snippets', private: true, type: 'module' }))
  all.forEach((b, k) => writeFileSync(join(DIR, name(b, k)), b.code))

  const env = { ...process.env, PORT: String(await freePort()), NODE_OPTIONS: '' }
  env.PATH = `${join(DIR, 'node_modules', '.bin')}${delimiter}${env.PATH}`
  const background = []
  try {
    for (const [k, b] of all.entries()) {
      if (b.lang === 'ts' || b.file || b.tags.includes('fragment')) continue
      const file = name(b, k)
      if (process.env.TOOLHOST_BACKEND === 'wasm' && /\bjournal:/.test(b.code)) {
        // The WebAssembly build refuses a journal (tested in wasm-fallback.test.mjs).
        await t.test(`README.md:${b.line} runs`, { skip: 'a journal needs the native addon' }, () => {})
        continue
      }
      if (b.tags.includes('norun')) {
        await t.test(`README.md:${b.line} parses`, () => {
          const r = spawnSync(process.execPath, ['--check', file], { cwd: DIR, encoding: 'utf8' })
          assert.equal(r.status, 0, r.stderr)
        })
      } else if (b.tags.includes('background')) {
        await t.test(`README.md:${b.line} starts`, async () => {
          background.push(await start(file, env))
        })
      } else {
        await t.test(`README.md:${b.line} runs`, async () => {
          const r = await run(file, env)
          assert.equal(r.code, 0, `exit ${r.code ?? r.signal}:\n${r.out}`)
          let from = 0
          for (const want of expectations(b.code)) {
            const at = r.out.indexOf(want, from)
            assert.ok(at >= 0, `expected ${JSON.stringify(want)} in the output${from > 0 ? ' after what came before it' : ''}:\n${r.out}`)
            from = at + want.length
          }
        })
      }
    }
  } finally {
    for (const child of background) child.kill('SIGTERM')
  }

  const ts = all.map((b, k) => [b, name(b, k)]).filter(([b]) => b.lang === 'ts')
  if (ts.length > 0) {
    await t.test(`the ${ts.length} ts blocks type-check (README.md:${ts.map(([b]) => b.line).join(', ')})`, () => {
      writeFileSync(join(DIR, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: true, types: ['node'] },
        files: ts.map(([, f]) => f),
      }))
      const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: DIR, encoding: 'utf8' })
      assert.equal(r.status, 0, r.stdout + r.stderr)
    })
  }
})
