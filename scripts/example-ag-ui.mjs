#!/usr/bin/env node
// `npm run example:ag-ui`: serves examples/lit-ag-ui on Vite's dev server, with its
// scripted AG-UI server at /agent, and prints the address to open. Ctrl+C stops it.
//
//   npm run example:ag-ui                 http://127.0.0.1:5173/
//   npm run example:ag-ui -- --port 8080  another port
import { spawn } from 'node:child_process'
import { EXAMPLE, prepareExample, viteBin } from './lit-ag-ui-app.mjs'

const args = process.argv.slice(2)
await prepareExample()
const vite = spawn(process.execPath, [viteBin(), '--host', '127.0.0.1', '--strictPort', ...args], { cwd: EXAMPLE, stdio: 'inherit' })
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => vite.kill(signal))
vite.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
