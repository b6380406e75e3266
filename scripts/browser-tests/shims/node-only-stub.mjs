// Exports of Node built-ins that have no browser shim (node:fs, node:crypto, ...).
// The bundler (lib/bundle.mjs) builds one module per built-in whose exports are the
// real module's names, each bound to a value made here: importing works, so a test
// file still loads, and any use (call, construct, property access) throws an error
// naming the API and telling how to mark the test Node-only.

export function nodeOnly(moduleName, exportName) {
  const what = exportName === 'default' ? moduleName : `${moduleName} ${exportName}`
  const fail = () => {
    const error = new Error(`${what} is not available in the browser: this test is Node-only; ` +
      'list it in scripts/browser-tests/node-only.mjs')
    error.code = 'ERR_NODE_ONLY'
    throw error
  }
  return new Proxy(function nodeOnlyApi() {}, {
    apply: fail,
    construct: fail,
    get: fail,
    set: fail,
    has: fail,
  })
}
