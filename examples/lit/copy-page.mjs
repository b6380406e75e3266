// What a bundler other than Vite leaves out of dist/, copied there as Vite would lay it
// out: index.html (its script is dist/src/main.js, the bundle), the CSS and the favicon
// it links, and with --wasm toolhost's engine, next to the bundle. esbuild and Rollup
// leave `new URL('toolhost_wasm_bg.wasm', import.meta.url)` as it is, so the file must be
// where that URL points; webpack and Vite emit it themselves.
import { cpSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

mkdirSync('dist/src', { recursive: true })
cpSync('index.html', 'dist/index.html')
cpSync('src/page.css', 'dist/src/page.css')
cpSync('public', 'dist', { recursive: true })
if (process.argv.includes('--wasm')) {
  const toolhost = dirname(createRequire(import.meta.url).resolve('toolhost/package.json'))
  cpSync(join(toolhost, 'wasm', 'toolhost_wasm_bg.wasm'), 'dist/src/toolhost_wasm_bg.wasm')
}
