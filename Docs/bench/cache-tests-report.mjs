// Runs the HTTP caching test suite (http-tests/cache-tests) as a browser cache against BASE and
// prints the figures of Docs/Caching.md: totals, a table per group, and every test that did not
// pass with the rule it checks. Called by cache-tests.sh; it only drives the suite's own modules,
// which stay in the suite's checkout.
//
//   node --no-warnings cache-tests-report.mjs SUITE_DIR BASE [--id TEST_ID] [--json FILE] [--markdown]
//
// The suite's command-line runner (test-engine/cli.mjs) tests a shared cache: it marks every
// request `cache: no-store` and skips the tests only a private cache runs. The suite's browser page
// calls the same runner with its browser flag on, which is what this does: the 300 tests a
// browser runs, each request's cache mode (undici's fetch turns `no-cache` and `reload` into
// request headers, as a browser's HTTP layer does), and the results counted as cache-tests.fyi
// counts them: a test passes when its result is a pass (or a "yes" for a check) and every test it
// depends on passes.
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const [suiteDir, base, ...rest] = process.argv.slice(2)
if (!suiteDir || !base) {
  console.error('usage: cache-tests-report.mjs SUITE_DIR BASE [--id TEST_ID] [--json FILE] [--markdown]')
  process.exit(2)
}
const option = name => {
  const at = rest.indexOf(name)
  return at >= 0 ? rest[at + 1] : undefined
}
const only = option('--id')
const jsonFile = option('--json')
const markdown = rest.includes('--markdown')

const suiteModule = relative => import(pathToFileURL(path.join(path.resolve(suiteDir), relative)).href)
const { runTests, getResults } = await suiteModule('test-engine/client/runner.mjs')
const { determineTestResult, resultTypes } = await suiteModule('test-engine/lib/results.mjs')
const suites = (await suiteModule('tests/index.mjs')).default

// The tests a browser cache runs, in the suite's order, with their group.
const browserTests = []
for (const suite of suites) {
  for (const test of suite.tests) {
    if (test.cdn_only === true || test.browser_skip === true) continue
    if (only !== undefined && test.id !== only) continue
    browserTests.push({ suite, test })
  }
}
if (browserTests.length === 0) {
  console.error(`no browser test has the id ${only}`)
  process.exit(2)
}
if (only !== undefined) browserTests[0].test.dump = true // the suite then logs both sides of each request

const selected = new Map()
for (const { suite, test } of browserTests) {
  if (!selected.has(suite)) selected.set(suite, { ...suite, tests: [] })
  selected.get(suite).tests.push(test)
}
await runTests([...selected.values()], true, base.replace(/\/+$/, ''))
const results = getResults()
if (jsonFile) fs.writeFileSync(jsonFile, JSON.stringify(results, null, 2) + '\n')

// The suite's published browser results, for comparison on each line of the failures.
const browsers = {}
for (const name of ['chrome', 'firefox', 'safari']) {
  const file = path.join(path.resolve(suiteDir), 'results', `${name}.json`)
  if (fs.existsSync(file)) browsers[name] = JSON.parse(fs.readFileSync(file, 'utf8'))
}

const isRequired = test => test.kind === 'required' || test.kind === undefined
const passes = test => {
  const verdict = determineTestResult(suites, test.id, results)
  return verdict === resultTypes.pass || verdict === resultTypes.yes
}
const verdictSymbol = test => determineTestResult(suites, test.id, results)[2]

const groups = new Map()
const total = { passed: 0, count: 0, requiredPassed: 0, required: 0 }
const failures = []
for (const { suite, test } of browserTests) {
  if (!groups.has(suite.id)) groups.set(suite.id, { name: suite.name, passed: 0, count: 0, requiredPassed: 0, required: 0 })
  const group = groups.get(suite.id)
  const ok = passes(test)
  for (const tally of [group, total]) {
    tally.count++
    if (ok) tally.passed++
    if (isRequired(test)) {
      tally.required++
      if (ok) tally.requiredPassed++
    }
  }
  if (!ok) failures.push({ suite, test })
}
const stale = groups.get('stale') || { passed: 0, count: 0 }

const line = (cells) => markdown ? `| ${cells.join(' | ')} |` : cells.map((cell, i) => i === 0 ? String(cell).padEnd(20) : String(cell).padStart(9)).join(' ')
console.log(`TOTAL passed=${total.passed}/${total.count} required=${total.requiredPassed}/${total.required} stale=${stale.passed}/${stale.count}`)
console.log('')
console.log(line(['group', 'passed', 'required']))
if (markdown) console.log('| --- | ---: | ---: |')
for (const [id, group] of groups) {
  console.log(line([id, `${group.passed}/${group.count}`, `${group.requiredPassed}/${group.required}`]))
}
console.log(line(['all', `${total.passed}/${total.count}`, `${total.requiredPassed}/${total.required}`]))
console.log('')
console.log(`NOT PASSED (${failures.length}): result, group, id, kind — the rule it checks [RFC 9111 anchors] — what the suite saw` +
  (Object.keys(browsers).length ? ` — published browser results (${Object.keys(browsers).join(' ')})` : ''))
for (const { suite, test } of failures) {
  const result = results[test.id]
  const detail = result === undefined ? 'not run' : result === true ? 'a test it depends on did not pass' : `${result[0]}: ${result[1]}`
  const anchors = test.spec_anchors || suite.spec_anchors || []
  console.log(`${verdictSymbol(test)} ${suite.id} ${test.id} (${test.kind || 'required'}) — ${test.name}` +
    `${anchors.length ? ` [${anchors.join(', ')}]` : ''} — ${detail}` +
    (Object.keys(browsers).length
      ? ' — ' + Object.values(browsers).map(results => determineTestResult(suites, test.id, results)[2] || '-').join(' ')
      : ''))
}
