// Turns stack traces from the page (http://127.0.0.1:PORT/__harness/3/chunks/x.js:120:7)
// into repository paths (__test__/registry.test.mjs:42:5) using the bundles' source
// maps, so failures point at the test source, not at the bundle.
import { SourceMap } from 'node:module'
import { relative, resolve, sep } from 'node:path'

export function createStackMapper({ origin, repoRoot, harnessDir = 'scripts/browser-tests/shims/' }) {
  /** URL path of a bundled file -> { map: SourceMap, dir } */
  const maps = new Map()
  const escapedOrigin = origin.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const location = new RegExp(`${escapedOrigin}(/[^\\s()]+?):(\\d+):(\\d+)`, 'g')

  function add(urlPath, { json, dir }) {
    try {
      maps.set(urlPath, { map: new SourceMap(JSON.parse(Buffer.from(json).toString('utf8'))), dir })
    } catch {
      // An unreadable map only leaves the bundle's positions in stack traces.
    }
  }

  function remove(urlPrefix) {
    for (const key of maps.keys()) if (key.startsWith(urlPrefix)) maps.delete(key)
  }

  function mapLocation(urlPath, line, column) {
    const entry = maps.get(urlPath)
    if (entry) {
      const found = entry.map.findEntry(line - 1, column - 1)
      if (found && found.originalSource !== undefined) {
        const source = found.originalSource.includes(':') && !found.originalSource.startsWith('.')
          ? found.originalSource // a virtual module (harness-entry:, node-only:)
          : relative(repoRoot, resolve(entry.dir, found.originalSource)).split(sep).join('/')
        return `${source}:${found.originalLine + 1}:${found.originalColumn + 1}`
      }
    }
    // Not bundled: served straight from the repository, so the URL path is the file.
    return `${urlPath.slice(1)}:${line}:${column}`
  }

  /** Maps every location; drops the harness's own frames unless nothing else is left. */
  function mapStack(text) {
    if (typeof text !== 'string' || !text) return text
    const mapped = text.replace(location, (_, urlPath, line, column) => mapLocation(urlPath, Number(line), Number(column)))
    const lines = mapped.split('\n')
    const isHarnessFrame = (line) => /^\s+at /.test(line) && line.includes(harnessDir)
    const kept = lines.filter((line) => !isHarnessFrame(line))
    return kept.some((line) => /^\s+at /.test(line)) ? kept.join('\n') : mapped
  }

  return { add, remove, mapStack }
}
