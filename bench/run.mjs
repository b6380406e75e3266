// Benchmark runner: toolhost vs two peer stacks: ajv + cockatiel + EventTarget (`peer`)
// and zod 4 + p-retry + p-timeout (`zod`, the AI SDK users' stack).
//   node bench/run.mjs [--quick] [--standin] [--only B1,B3] [--no-browser] [--no-journal] [--profile]
// Each side x scenario runs in a fresh child process (5 runs, median), so peak
// RSS is per side and per scenario. B1 and B3 also run in headless Chromium (the
// wasm backend against the same peer, one fresh page per side: bench/browser.mjs)
// unless --no-browser; --profile adds a CPU profile of the toolhost B1 page.
// Exits non-zero only if a scenario crashed or returned a wrong result; missed
// targets are reported, not fatal.
import { fork, execFileSync, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import { EventEmitter } from 'node:events'

const argv = process.argv.slice(2)
const QUICK = argv.includes('--quick')
const STANDIN = argv.includes('--standin')
const BROWSER = !argv.includes('--no-browser')
const PROFILE = argv.includes('--profile')
const RUNS = 5
const SIDES = ['toolhost', 'peer', 'zod']

async function loadApi(side) {
  const url = side === 'peer' ? './peer.mjs' : side === 'zod' ? './peer-zod.mjs' : STANDIN ? './toolhost-standin.mjs' : '../js/node.mjs'
  const m = await import(new URL(url, import.meta.url))
  return m
}

async function child(side, id) {
  // cockatiel adds one abort listener per in-flight call to a shared signal;
  // lift the listener cap (before any library loads) so that is not reported as a leak.
  EventEmitter.defaultMaxListeners = 0
  const { SCENARIOS, SIZES } = await import('./scenarios.mjs')
  const n = Math.max(1, Math.round(SIZES[id] / (QUICK ? 20 : 1)))
  try {
    const res = await SCENARIOS[id](await loadApi(side), n, RUNS)
    process.send({ ok: true, n, ...res, maxRssMB: process.resourceUsage().maxRSS / 1024 }, () => process.exit(0))
  } catch (err) {
    process.send({ ok: false, error: String(err?.stack ?? err) }, () => process.exit(1))
  }
}

function runChild(side, id) {
  return new Promise((resolve) => {
    let msg = null
    const cp = fork(fileURLToPath(import.meta.url), ['--child', side, id, ...argv.filter((a) => a === '--quick' || a === '--standin')])
    cp.on('message', (m) => { msg = m })
    cp.on('exit', (code, signal) => resolve(msg?.ok ? msg : { ok: false, error: msg?.error ?? `child exited with ${signal ?? code}` }))
  })
}

const f = (x, d = 2) => (x == null || Number.isNaN(x) ? '-' : x.toFixed(d))
const kcalls = (x) => (x == null ? '-' : Math.round(x).toLocaleString('en-US'))

function machine(browserVersion) {
  let rust = 'unknown'
  try { rust = execFileSync('rustc', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() } catch {}
  const cpus = os.cpus()
  return [
    `- CPU: ${cpus[0]?.model ?? 'unknown'} x ${cpus.length}`,
    `- Node: ${process.version}`,
    `- Rust: ${rust}`,
    `- Date: ${new Date().toISOString()}`,
    ...(browserVersion ? [`- Browser: ${browserVersion} headless, toolhost = ${STANDIN ? 'JS STAND-IN' : 'wasm backend (js/browser.mjs)'}, same peer, pages on 127.0.0.1 without COOP/COEP`] : []),
    `- Mode: ${QUICK ? 'quick (sizes / 20)' : 'full'}, ${RUNS} runs per scenario (median), toolhost = ${STANDIN ? 'JS STAND-IN (numbers meaningless)' : 'toolhost (js/node.mjs)'}`,
  ].join('\n')
}

async function main() {
  const { SIZES, TITLES } = await import('./scenarios.mjs')
  const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1].split(',') : Object.keys(SIZES)
  const t0 = Date.now()
  const res = {}
  let failed = false
  const size = (id) => Math.max(1, Math.round(SIZES[id] / (QUICK ? 20 : 1)))
  for (const id of only) {
    res[id] = {}
    for (const side of SIDES) {
      process.stderr.write(`${id} ${side} ... `)
      const r = await runChild(side, id)
      res[id][side] = r
      if (!r.ok) { failed = true; process.stderr.write(`FAILED\n${r.error}\n`) } else process.stderr.write(`${f(r.usPerCall)} µs/call\n`)
    }
  }

  // The browser column (after the Node runs, never at the same time).
  const web = {} // id -> { toolhost, peer }, as res
  let browserVersion, profile, first, wasm
  const { BROWSER_SCENARIOS, runBrowser } = BROWSER ? await import('./browser.mjs') : { BROWSER_SCENARIOS: [] }
  const webIds = only.filter((id) => BROWSER_SCENARIOS.includes(id))
  if (webIds.length) {
    try {
      const sizes = Object.fromEntries(BROWSER_SCENARIOS.map((id) => [id, size(id)]))
      const b = await runBrowser({ ids: webIds, sizes, runs: RUNS, standin: STANDIN, profile: PROFILE, log: (s) => process.stderr.write(s) })
      browserVersion = b.version
      profile = b.profile
      first = b.first
      wasm = b.wasm
      Object.assign(web, b.results)
    } catch (err) {
      process.stderr.write(`the browser column could not run (--no-browser skips it):\n${err?.stack ?? err}\n`)
      for (const id of webIds) web[id] = { toolhost: { ok: false, error: String(err) }, peer: { ok: false, error: String(err) } }
    }
    for (const id of webIds) if (!web[id].toolhost.ok || !web[id].peer.ok) failed = true
  }

  const kb = (n) => `${Math.round(n / 1000).toLocaleString('en-US')} KB`
  const browserFacts = [
    ...(wasm ? [`- Browser engine: wasm/toolhost_wasm_bg.wasm is ${kb(wasm.raw)}, ${kb(wasm.gzip)} gzipped (-9, Node's zlib), ${kb(wasm.brotli)} with brotli (11)`] : []),
    ...(first?.error ? [`- Time to first tool result in Chromium: FAILED ${first.error}`] : first ? [`- Time to first tool result in Chromium (median of ${first.runs} fresh pages, ms after navigation start): page code starts ${f(first.appStartMs, 0)}, load event ${f(first.loadEventMs, 0)}, engine ready ${f(first.engineReadyMs, 0)} (its .wasm fetched in ${f(first.wasmFetchMs, 0)}), first result ${f(first.firstResultMs, 0)}`] : []),
  ]
  const out = ['## toolhost benchmark', '', machine(browserVersion), ...browserFacts, '',
    '| scenario | calls | toolhost µs/call | peer µs/call | ratio t/p | zod+p-retry µs/call | ratio t/z | toolhost calls/s | peer calls/s | toolhost peak RSS MB | peer peak RSS MB | extra (toolhost / peer / zod) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|']
  for (const id of only) {
    const t = res[id].toolhost, p = res[id].peer, z = res[id].zod
    const ok = t.ok && p.ok && z.ok
    const extra = !ok ? 'CRASHED' : id === 'B4' ? `main-thread µs/call ${f(t.mainThreadUs)} / ${f(p.mainThreadUs)} / ${f(z.mainThreadUs)} (${(p.argBytes / 1e6).toFixed(2)} MB, ${p.lineItems} items)`
      : id === 'B5' ? `retry delay dev p50 ${f(t.devP50Ms, 3)} / ${f(p.devP50Ms, 3)} / ${f(z.devP50Ms, 3)} ms, p99 ${f(t.devP99Ms, 3)} / ${f(p.devP99Ms, 3)} / ${f(z.devP99Ms, 3)} ms`
      : id === 'B6' ? `overhead vs B1 ${f(t.overheadUs)} / ${f(p.overheadUs)} / ${f(z.overheadUs)} µs/call, log lines/call ${f(t.logLinesPerCall, 1)} / ${f(p.logLinesPerCall, 1)} / ${f(z.logLinesPerCall, 1)}` : ''
    out.push(`| ${id} ${TITLES[id]} | ${(t.n ?? p.n ?? 0).toLocaleString('en-US')} | ${f(t.usPerCall)} | ${f(p.usPerCall)} | ${t.ok && p.ok ? f(t.usPerCall / p.usPerCall) : '-'} | ${f(z.usPerCall)} | ${t.ok && z.ok ? f(t.usPerCall / z.usPerCall) : '-'} | ${kcalls(t.callsPerSec)} | ${kcalls(p.callsPerSec)} | ${f(t.maxRssMB, 0)} | ${f(p.maxRssMB, 0)} | ${extra} |`)
    if (web[id]) {
      const wt = web[id].toolhost, wp = web[id].peer, wok = wt.ok && wp.ok
      const wextra = !wok ? 'CRASHED' : `${t.ok ? `wasm/native µs/call ${f(wt.usPerCall / t.usPerCall)}×; ` : ''}peak RSS = the page's renderer, JS heap at the end ${f(wt.jsHeapMB, 0)} / ${f(wp.jsHeapMB, 0)} MB; toolhost page CSP without 'unsafe-eval': 0 violations`
      out.push(`| ${id} (Chromium, wasm) ${TITLES[id]} | ${(wt.n ?? wp.n ?? 0).toLocaleString('en-US')} | ${f(wt.usPerCall)} | ${f(wp.usPerCall)} | ${wok ? f(wt.usPerCall / wp.usPerCall) : '-'} | - | - | ${kcalls(wt.callsPerSec)} | ${kcalls(wp.callsPerSec)} | ${f(wt.peakRssMB, 0)} | ${f(wp.peakRssMB, 0)} | ${wextra} |`)
    }
  }

  const get = (id, side, k) => (res[id]?.[side]?.ok ? res[id][side][k] : undefined)
  const getWeb = (id, side, k) => (web[id]?.[side]?.ok ? web[id][side][k] : undefined)
  const targets = [
    ['B1 µs/call ratio toolhost/peer ≤ 0.5', get('B1', 'toolhost', 'usPerCall') / get('B1', 'peer', 'usPerCall'), (v) => v <= 0.5],
    ['B2 µs/call ratio toolhost/peer ≤ 0.5', get('B2', 'toolhost', 'usPerCall') / get('B2', 'peer', 'usPerCall'), (v) => v <= 0.5],
    ['B3 throughput toolhost/peer ≥ 1.0×', get('B3', 'toolhost', 'callsPerSec') / get('B3', 'peer', 'callsPerSec'), (v) => v >= 1.0],
    ['B4 main-thread time toolhost/peer ≤ 0.5×', get('B4', 'toolhost', 'mainThreadUs') / get('B4', 'peer', 'mainThreadUs'), (v) => v <= 0.5],
    ['B1 µs/call ratio toolhost/(zod + p-retry) ≤ 0.5', get('B1', 'toolhost', 'usPerCall') / get('B1', 'zod', 'usPerCall'), (v) => v <= 0.5],
    ['B5 toolhost p99 retry-delay deviation (actual vs scheduled) ≤ 1 ms', get('B5', 'toolhost', 'devP99Ms'), (v) => v <= 1],
    ['B6 toolhost logging+metadata overhead ≤ 1 µs/call', get('B6', 'toolhost', 'overheadUs'), (v) => v <= 1],
    ['B3 toolhost peak RSS ≤ peer (ratio ≤ 1)', get('B3', 'toolhost', 'maxRssMB') / get('B3', 'peer', 'maxRssMB'), (v) => v <= 1],
    ['browser B1 µs/call ratio toolhost/peer in the same page ≤ 0.5', getWeb('B1', 'toolhost', 'usPerCall') / getWeb('B1', 'peer', 'usPerCall'), (v) => v <= 0.5],
    ['browser B1 µs/call ≤ 2× native B1 (Chromium wasm / Node addon)', getWeb('B1', 'toolhost', 'usPerCall') / get('B1', 'toolhost', 'usPerCall'), (v) => v <= 2],
  ]
  out.push('', '### targets', '', '| target | value | met |', '|---|---|---|')
  for (const [name, v, pass] of targets) {
    const known = typeof v === 'number' && Number.isFinite(v)
    out.push(`| ${name} | ${known ? f(v, 3) : 'n/a'} | ${known ? (pass(v) ? 'yes' : 'NO') : 'n/a (not run or crashed)'} |`)
  }
  // Where B5's tail comes from (bench/b5-split.mjs: the addon's timer trace).
  if (only.includes('B5') && !STANDIN) {
    const split = spawnSync(process.execPath, [fileURLToPath(new URL('./b5-split.mjs', import.meta.url)), ...(QUICK ? ['--calls', '200'] : [])], { encoding: 'utf8' })
    if (split.status === 0) out.push('', split.stdout.trimEnd())
    else {
      failed = true
      out.push('', `### B5 split: FAILED (exit ${split.status})`, '', '```', (split.stderr || split.stdout).trim().slice(-2000), '```')
    }
    // And run by run, beside V8's compiling and collecting (bench/b5-procs.mjs --by-run).
    const runs = spawnSync(process.execPath, [fileURLToPath(new URL('./b5-procs.mjs', import.meta.url)), '--by-run', ...(QUICK ? ['--procs', '1', '--calls', '200'] : [])], { encoding: 'utf8' })
    if (runs.status === 0) out.push('', runs.stdout.trimEnd())
    else {
      failed = true
      out.push('', `### B5 run by run: FAILED (exit ${runs.status})`, '', '```', (runs.stderr || runs.stdout).trim().slice(-2000), '```')
    }
  }
  if (profile) {
    out.push('', '### CPU profile: toolhost B1 page in Chromium', '')
    if (profile.error) out.push(`failed: ${profile.error}`)
    else {
      out.push(`One more page under the CDP sampling profiler (100 µs), not one of the measured ones: ${f(profile.usPerCall)} µs/call while profiled, ${f(profile.totalMs, 0)} ms sampled (warm-up and runs).`, '',
        `Self time by place: ${profile.places.slice(0, 8).map((p) => `${p.place} ${f(p.pct, 1)}%`).join(', ')}`, '',
        '| self % | self ms | function | where |', '|---|---|---|---|')
      for (const r of profile.rows) out.push(`| ${f(r.pct, 1)} | ${f(r.selfMs, 1)} | \`${r.fn.replaceAll('|', '\\|')}\` | ${r.where || (r.fn.startsWith('(') ? '(V8)' : '(browser built-in)')} |`)
    }
  }
  // The durable journal's scenarios (bench/journal.mjs), unless --no-journal or --only.
  if (!argv.includes('--no-journal') && !argv.includes('--only')) {
    const journal = spawnSync(process.execPath, [fileURLToPath(new URL('./journal.mjs', import.meta.url)), ...(QUICK ? ['--quick'] : [])], { encoding: 'utf8' })
    if (journal.status === 0) out.push(journal.stdout.trimEnd())
    else {
      failed = true
      out.push('', `### the journal: FAILED (exit ${journal.status})`, '', '```', (journal.stderr || journal.stdout).trim().slice(-2000), '```')
    }
  }
  out.push('', `total ${((Date.now() - t0) / 1000).toFixed(1)} s${failed ? ' — SOME SCENARIOS CRASHED OR RETURNED WRONG RESULTS (see stderr)' : ''}`)
  console.log(out.join('\n'))
  process.exitCode = failed ? 1 : 0
}

if (argv[0] === '--child') child(argv[1], argv[2])
else main().catch((e) => { console.error(e); process.exitCode = 2 })
