// Reads the checks.json files that `conformance server -o DIR` wrote, compares
// them with expected-failures.txt and prints one table. Used by run.sh.
//
//   node report.mjs validate EXPECTED_FILE SCENARIO...
//   node report.mjs report   EXPECTED_FILE RESULTS_DIR SCENARIO...
//
// A scenario passes when none of its checks is FAILURE or WARNING (the
// package's own rule for its --expected-failures baseline). Exit status of
// `report`: 0 when every scenario passed or failed as expected, 1 when one
// failed unexpectedly or passed while listed. Status 2: bad input.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

function fail(message) {
  console.error(`conformance: ${message}`);
  process.exit(2);
}

// "scenario-name  # reason", one per line; blank lines and lines that start
// with '#' are comments. Every entry needs a reason and (when `known` is
// given) the name of a scenario the package has.
function readExpected(file, known) {
  if (!existsSync(file)) return new Map();
  const entries = new Map();
  const problems = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((raw, index) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const where = `${file}:${index + 1}`;
      const hash = line.indexOf('#');
      const name = (hash < 0 ? line : line.slice(0, hash)).trim();
      const reason = hash < 0 ? '' : line.slice(hash + 1).trim();
      if (/\s/.test(name)) problems.push(`${where}: one scenario name per line, got "${name}"`);
      else if (known && !known.includes(name))
        problems.push(`${where}: unknown scenario "${name}"`);
      else if (reason === '')
        problems.push(`${where}: "${name}" needs a reason: "${name}  # reason"`);
      else if (entries.has(name)) problems.push(`${where}: "${name}" is listed twice`);
      else entries.set(name, reason);
    });
  if (problems.length > 0) fail(`bad expected-failures file:\n  ${problems.join('\n  ')}`);
  return entries;
}

// `-o DIR` makes DIR/server-<scenario>-<ISO time with ':' and '.' as '-'>/checks.json.
function findChecks(resultsDir, scenario) {
  const stamp = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;
  const prefix = `server-${scenario}-`;
  const dirs = existsSync(resultsDir)
    ? readdirSync(resultsDir)
        .filter((d) => d.startsWith(prefix) && stamp.test(d.slice(prefix.length)))
        .sort()
    : [];
  if (dirs.length === 0) return undefined;
  const file = join(resultsDir, dirs[dirs.length - 1], 'checks.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

const [mode, expectedFile, ...rest] = process.argv.slice(2);
if (mode === 'validate') {
  readExpected(expectedFile, rest);
  process.exit(0);
}
if (mode !== 'report') fail(`unknown mode "${mode}"`);
const [resultsDir, ...scenarios] = rest;
// run.sh validated the names against the whole list; a run may cover a subset.
const expected = readExpected(expectedFile, undefined);

const rows = [];
for (const scenario of scenarios) {
  const checks = findChecks(resultsDir, scenario);
  const count = (status) => (checks ?? []).filter((c) => c.status === status).length;
  const row = {
    scenario,
    ran: checks !== undefined,
    success: count('SUCCESS'),
    failure: count('FAILURE'),
    warning: count('WARNING'),
    listed: expected.has(scenario),
    reason: expected.get(scenario),
    bad: (checks ?? []).filter((c) => c.status === 'FAILURE' || c.status === 'WARNING'),
  };
  const passed = row.ran && row.failure === 0 && row.warning === 0;
  if (passed) row.result = row.listed ? 'XPASS' : 'PASS';
  else row.result = row.listed ? 'XFAIL' : 'FAIL';
  rows.push(row);
}

const width = Math.max(8, ...rows.map((r) => r.scenario.length));
const line = (cells) => cells.join('  ');
console.log(
  line([
    'scenario'.padEnd(width),
    'ok'.padStart(3),
    'fail'.padStart(4),
    'warn'.padStart(4),
    'result',
  ]),
);
console.log(line(['-'.repeat(width), '---', '----', '----', '------']));
for (const r of rows) {
  const counts = r.ran
    ? [String(r.success).padStart(3), String(r.failure).padStart(4), String(r.warning).padStart(4)]
    : ['  -', '   -', '   -'];
  let result = r.result;
  if (!r.ran) result += ' (no result: the scenario did not finish)';
  if (r.result === 'XFAIL') result += `  # ${r.reason}`;
  if (r.result === 'XPASS')
    result += '  (passes, but expected-failures.txt lists it: remove the entry)';
  console.log(line([r.scenario.padEnd(width), ...counts, result]));
}

const problems = rows.filter((r) => r.result === 'FAIL');
if (problems.length > 0) {
  console.log('\nUnexpected failures:');
  for (const r of problems) {
    console.log(
      `  ${r.scenario}${r.ran ? '' : ': no checks.json (crashed or timed out; see the log)'}`,
    );
    for (const c of r.bad) {
      console.log(`    [${c.status}] ${c.name}: ${c.description}`);
      if (c.errorMessage) console.log(`      ${c.errorMessage}`);
    }
  }
}

const tally = (result) => rows.filter((r) => r.result === result).length;
console.log(
  `\nconformance: ${tally('PASS')} passed, ${tally('XFAIL')} failed as expected, ` +
    `${tally('FAIL')} failed unexpectedly, ${tally('XPASS')} passed unexpectedly ` +
    `(of ${rows.length} scenarios)`,
);
process.exit(tally('FAIL') + tally('XPASS') > 0 ? 1 : 0);
