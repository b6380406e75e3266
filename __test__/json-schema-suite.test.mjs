// Runs the official JSON-Schema-Test-Suite (drafts 2020-12 and 7) through
// ToolRegistry.register + validate (issue 2, "Must show").
//
// A tool's input schema must have an object root, so each case's schema becomes the
// `value` property of a wrapper object schema and each datum becomes `{ value: data }`.
// Local JSON-pointer references (`#`, `#/$defs/...`) are rewritten to point under
// `#/properties/value`, except inside a subschema that starts a new resource (`$id`),
// and not at all when the case schema has a root `$id` (there `#` already means itself).
import { test, describe, after } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { ToolRegistry } from 'toolhost'
// The suite, vendored with its license (fixtures/json-schema-test-suite/README.md says
// which commit), as JSON modules: no file system, so this also runs in the browser.
import SUITE from './fixtures/json-schema-test-suite/index.mjs'

const SUITE_DIR = new URL('./fixtures/json-schema-test-suite/', import.meta.url)

const DRAFTS = [
  { dir: 'draft2020-12', metaSchema: 'https://json-schema.org/draft/2020-12/schema' },
  { dir: 'draft7', metaSchema: 'http://json-schema.org/draft-07/schema#' },
]
const SKIPPED_FILES = new Set(['refRemote.json'])

/**
 * Cases that fail by design or by a documented engine limitation. `testDescription`
 * absent means every test of the case (including a refused registration). Each entry
 * must still fail: a stale exception fails the suite.
 */
const FORMAT_ANNOTATION_ONLY = 'toolhost asserts `format` in every draft (issue 2: a tool\'s arguments should honour it), ' +
  'so a 2020-12 case expecting format to be an annotation only fails by design'
const NO_REMOTE_REFS = 'toolhost never fetches schemas: a $ref to a document that is not embedded in the tool schema ' +
  '(remote test documents under localhost:1234, or the official meta-schema) is refused with INVALID_SCHEMA by design'
const EXCEPTIONS = [
  ...['email', 'regex', 'ipv4', 'ipv6', 'hostname', 'date', 'date-time', 'time', 'json-pointer', 'relative-json-pointer',
    'iri', 'iri-reference', 'uri', 'uri-reference', 'uri-template', 'uuid', 'duration', 'idn-email', 'idn-hostname'].map((f) => ({
    file: 'draft2020-12/format.json',
    caseDescription: `${f} format`,
    testDescription: `invalid ${f} string is only an annotation by default`,
    reason: FORMAT_ANNOTATION_ONLY,
  })),
  { file: 'draft2020-12/defs.json', caseDescription: 'validate definition against metaschema', reason: NO_REMOTE_REFS },
  { file: 'draft2020-12/ref.json', caseDescription: 'remote ref, containing refs itself', reason: NO_REMOTE_REFS },
  { file: 'draft7/definitions.json', caseDescription: 'validate definition against metaschema', reason: NO_REMOTE_REFS },
  { file: 'draft7/ref.json', caseDescription: 'remote ref, containing refs itself', reason: NO_REMOTE_REFS },
  { file: 'draft2020-12/dynamicRef.json', caseDescription: 'strict-tree schema, guards against misspelled properties', reason: NO_REMOTE_REFS },
  { file: 'draft2020-12/dynamicRef.json', caseDescription: 'tests for implementation dynamic anchor and reference link', reason: NO_REMOTE_REFS },
  { file: 'draft2020-12/dynamicRef.json', caseDescription: '$ref and $dynamicAnchor are independent of order - $defs first', reason: NO_REMOTE_REFS },
  { file: 'draft2020-12/dynamicRef.json', caseDescription: '$ref and $dynamicAnchor are independent of order - $ref first', reason: NO_REMOTE_REFS },
  { file: 'draft2020-12/dynamicRef.json', caseDescription: '$ref to $dynamicRef finds detached $dynamicAnchor', reason: NO_REMOTE_REFS },
  {
    file: 'draft2020-12/vocabulary.json', caseDescription: 'schema that uses custom metaschema with with no validation vocabulary',
    reason: 'custom meta-schema at a remote URI: toolhost supports only the 2020-12, 2019-09 and draft-7 meta-schemas and never fetches one',
  },
  {
    file: 'draft2020-12/vocabulary.json', caseDescription: 'ignore unrecognized optional vocabulary',
    reason: 'custom meta-schema at a remote URI: toolhost supports only the 2020-12, 2019-09 and draft-7 meta-schemas and never fetches one',
  },
]

/**
 * Cases that fail because of a toolhost bug (not by design). Their tests are marked
 * `todo` and assert the correct outcome; remove an entry once the bug is fixed.
 */
const KNOWN_BUGS = []

// Keywords whose values are data, not schemas: never rewrite references inside them.
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples'])
const REF_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef']

function rewriteRefs(schema, isRoot = true) {
  if (Array.isArray(schema)) return schema.map((s) => rewriteRefs(s, false))
  if (schema === null || typeof schema !== 'object') return schema
  // A subschema with its own $id is a new resource: its `#` means itself.
  if (!isRoot && (typeof schema.$id === 'string' || typeof schema.id === 'string')) return schema
  // Object.fromEntries defines own properties, so a key named `__proto__` stays a key.
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => {
    if (DATA_KEYWORDS.has(key)) return [key, value]
    if (REF_KEYWORDS.includes(key) && typeof value === 'string' && (value === '#' || value.startsWith('#/'))) {
      return [key, '#/properties/value' + value.slice(1)]
    }
    return [key, rewriteRefs(value, false)]
  }))
}

function wrap(schema, metaSchema) {
  let inner = schema
  let $schema = metaSchema
  if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
    const { $schema: own, ...rest } = inner
    if (typeof own === 'string') $schema = own
    inner = typeof rest.$id === 'string' ? rest : rewriteRefs(rest)
  }
  return { $schema, type: 'object', properties: { value: inner }, required: ['value'] }
}

const counts = { files: 0, cases: 0, tests: 0, passed: 0, excepted: 0, knownBugs: 0, failed: 0 }
let toolSeq = 0
const filesRun = new Set()

function matching(list, file, caseDescription, testDescription) {
  return list.find(
    (x) => x.file === file && x.caseDescription === caseDescription &&
      (x.testDescription === undefined || x.testDescription === testDescription),
  )
}

/** Runs every case of one file; returns the failures sorted by kind. */
function runFile(draft, fileName) {
  const fileKey = `${draft.dir}/${fileName}`
  const cases = SUITE[draft.dir][fileName]
  const registry = new ToolRegistry()
  const unexpected = []
  const bugs = []
  const stillFailing = new Set()
  counts.files++
  filesRun.add(fileKey)

  for (const c of cases) {
    counts.cases++
    const name = `case_${++toolSeq}`
    let registrationError
    try {
      registry.register({ name, description: c.description, inputSchema: wrap(c.schema, draft.metaSchema), handler: () => null })
    } catch (e) {
      registrationError = `registration refused: ${e.code}: ${e.message}`
    }
    for (const t of c.tests) {
      counts.tests++
      let ok = false
      let detail = registrationError
      if (registrationError === undefined) {
        try {
          const result = registry.validate(name, { value: t.data })
          ok = result.valid === t.valid
          detail = `expected valid=${t.valid}, got ${JSON.stringify(result)}`
        } catch (e) {
          detail = `validate threw ${e.code}: ${e.message}`
        }
      }
      const exception = matching(EXCEPTIONS, fileKey, c.description, t.description)
      const bug = matching(KNOWN_BUGS, fileKey, c.description, t.description)
      const line = `${c.description} / ${t.description}: ${detail}`
      if (exception) {
        counts.excepted++
        if (!ok) stillFailing.add(exception)
      } else if (ok) {
        counts.passed++
      } else if (bug) {
        counts.knownBugs++
        bugs.push(line)
      } else {
        counts.failed++
        unexpected.push(line)
      }
    }
  }
  const stale = EXCEPTIONS.filter((x) => x.file === fileKey && !stillFailing.has(x))
  return { unexpected, bugs, stale }
}

for (const draft of DRAFTS) {
  describe(draft.dir, () => {
    const files = Object.keys(SUITE[draft.dir]).filter((f) => f.endsWith('.json') && !SKIPPED_FILES.has(f)).sort()
    for (const fileName of files) {
      const fileKey = `${draft.dir}/${fileName}`
      const outcome = runFile(draft, fileName)
      test(fileName, () => {
        assert.deepEqual(outcome.unexpected, [], `unexpected failures in ${fileKey}`)
        assert.deepEqual(
          outcome.stale.map((x) => `${x.caseDescription} / ${x.testDescription ?? '*'}`), [],
          `stale exceptions in ${fileKey}: they pass now (or match no case); remove them`,
        )
      })
      for (const bug of KNOWN_BUGS.filter((x) => x.file === fileKey)) {
        test(`${fileName}: ${bug.caseDescription}`, { todo: bug.reason }, () => {
          assert.deepEqual(outcome.bugs.filter((line) => line.startsWith(`${bug.caseDescription} / `)), [])
        })
      }
    }
  })
}

test('the index imports every file of the vendored suite, and only those', () => {
  for (const draft of DRAFTS) {
    const onDisk = readdirSync(new URL(`${draft.dir}/`, SUITE_DIR)).filter((f) => f.endsWith('.json')).sort()
    assert.deepEqual(Object.keys(SUITE[draft.dir]).sort(), onDisk, `${draft.dir}: run generate-index.mjs`)
  }
})

test('every exception and known bug names a file that ran', () => {
  const orphans = [...EXCEPTIONS, ...KNOWN_BUGS].filter((x) => !filesRun.has(x.file))
  assert.deepEqual(orphans, [])
})

test('the whole suite ran', () => {
  assert.ok(counts.files >= 80, `only ${counts.files} files ran`)
  assert.ok(counts.tests > 2000, `only ${counts.tests} tests ran`)
})

after(() => {
  console.log(
    `JSON-Schema-Test-Suite: ${counts.files} files, ${counts.cases} cases, ${counts.tests} tests run; ` +
      `${counts.passed} passed, ${counts.excepted} excepted, ${counts.knownBugs} known bugs (todo), ${counts.failed} failed`,
  )
})
