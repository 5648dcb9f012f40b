// Knows what a spec revision's requirement set names (the package's
// requirements/REVISION.yaml), reads the checks.json files that `conformance
// server -o DIR` wrote, compares them with expected-failures.txt and prints
// one table. Used by run.sh.
//
//   node report.mjs scenarios REVISION        the server scenarios it runs, one a line:
//                                             "NAME required", "NAME not-scored:REASON" or
//                                             "NAME by-name:REASON" (not in the set: run by name)
//   node report.mjs validate  EXPECTED_FILE   checks the file against the requirement sets
//   node report.mjs report    EXPECTED_FILE REVISION SETUP RESULTS_DIR SCENARIO...
//
// A check fails when its status is FAILURE or WARNING (the package's own rule
// for its --expected-failures baseline; INFO and SKIPPED do not fail). A
// scenario passes when none of its checks fails. Every scenario the run ran is
// judged, the not-scored ones too (the tasks extension, pending ones): what
// the package runs only "for visibility" would otherwise go unnoticed when it
// breaks. Exit status of `report`: 0 when every scenario passed or failed as
// listed, 1 when one failed unexpectedly or a listed one passed. Status 2: bad
// input.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const requirementsDir = join(here, 'node_modules', 'conformance-next', 'requirements');
const SETUPS = ['direct', 'aggregated'];

// Scenarios of the suite that no requirement set names, which run.sh runs by
// name (--scenario, at each revision's wire) after the requirement set: the
// skills extension (io.modelcontextprotocol/skills, SEP-2640). Not scored.
const BY_NAME = [
  'sep-2640-skills-enumeration',
  'sep-2640-skills-manifest',
  'sep-2640-skills-directory',
];

function fail(message) {
  console.error(`conformance: ${message}`);
  process.exit(2);
}

// The server scenarios a revision's requirement set runs: the required ones,
// then the not-scored ones with the package's reason (extension, pending, ...).
// Null, with `problems` told why, for a revision the package has no set for.
function requirementSet(revision, problems = undefined) {
  const file = join(requirementsDir, `${revision}.yaml`);
  if (!existsSync(file)) {
    const known = existsSync(requirementsDir)
      ? readdirSync(requirementsDir).map((f) => f.replace(/\.yaml$/, ''))
      : [];
    const why = `no requirement set for revision "${revision}" (known: ${known.join(', ') || 'none'})`;
    if (!problems) fail(why);
    problems.push(why);
    return null;
  }
  const doc = YAML.parse(readFileSync(file, 'utf8'));
  const scenarios = new Map();
  for (const name of doc.server ?? []) scenarios.set(name, 'required');
  for (const entry of doc.not_scored ?? []) {
    if (entry.leg === 'server') scenarios.set(entry.scenario, `not-scored:${entry.reason}`);
  }
  for (const name of BY_NAME) {
    if (!scenarios.has(name)) scenarios.set(name, 'by-name:extension');
  }
  return scenarios;
}

// "REVISION[/SETUP]  SCENARIO[:CHECK-ID]  # reason", one per line; blank lines
// and lines that start with '#' are comments. An entry without /SETUP holds
// for both setups (direct and aggregated). Every entry needs a reason; the
// scenario must be one its revision runs; a scenario is listed either whole
// or check by check, not both.
function readExpected(file) {
  const entries = [];
  if (!existsSync(file)) return entries;
  const problems = [];
  const sets = new Map();
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((raw, index) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const where = `${file}:${index + 1}`;
      const hash = line.indexOf('#');
      const fields = (hash < 0 ? line : line.slice(0, hash)).trim().split(/\s+/);
      const reason = hash < 0 ? '' : line.slice(hash + 1).trim();
      if (fields.length !== 2) {
        problems.push(`${where}: want "REVISION[/SETUP]  SCENARIO[:CHECK-ID]  # reason"`);
        return;
      }
      const [revision, setup] = fields[0].split('/');
      const [scenario, check] = fields[1].split(':');
      if (setup !== undefined && !SETUPS.includes(setup)) {
        problems.push(`${where}: setup "${setup}" is not one of ${SETUPS.join(', ')}`);
        return;
      }
      const unknown = [];
      if (!sets.has(revision)) sets.set(revision, requirementSet(revision, unknown));
      if (!sets.get(revision)) {
        problems.push(`${where}: ${unknown[0] ?? `no requirement set for revision "${revision}"`}`);
      } else if (!sets.get(revision).has(scenario)) {
        problems.push(`${where}: revision ${revision} runs no scenario "${scenario}"`);
      } else if (reason === '') {
        problems.push(`${where}: "${fields[1]}" needs a reason: "... ${fields[1]}  # reason"`);
      } else {
        entries.push({ where, index, revision, setup, scenario, check, reason });
      }
    });
  for (const e of entries) {
    const same = entries.filter(
      (o) =>
        o.revision === e.revision &&
        o.scenario === e.scenario &&
        (o.setup === undefined || e.setup === undefined || o.setup === e.setup),
    );
    if (same.some((o) => o.check === e.check && o.index < e.index))
      problems.push(`${e.where}: "${e.scenario}${e.check ? ':' + e.check : ''}" is listed twice`);
    if (e.check === undefined && same.some((o) => o.check !== undefined))
      problems.push(`${e.where}: "${e.scenario}" is listed whole and check by check`);
  }
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

const failed = (c) => c.status === 'FAILURE' || c.status === 'WARNING';

const [mode, ...args] = process.argv.slice(2);
if (mode === 'scenarios') {
  for (const [name, kind] of requirementSet(args[0])) console.log(`${name} ${kind}`);
  process.exit(0);
}
if (mode === 'validate') {
  readExpected(args[0]);
  process.exit(0);
}
if (mode !== 'report') fail(`unknown mode "${mode}"`);

const [expectedFile, revision, setup, resultsDir, ...scenarios] = args;
if (!SETUPS.includes(setup)) fail(`setup "${setup}" is not one of ${SETUPS.join(', ')}`);
const set = requirementSet(revision);
const listed = readExpected(expectedFile).filter(
  (e) => e.revision === revision && (e.setup === undefined || e.setup === setup),
);

const rows = [];
for (const scenario of scenarios) {
  const checks = findChecks(resultsDir, scenario);
  const mine = listed.filter((e) => e.scenario === scenario);
  const whole = mine.find((e) => e.check === undefined);
  const byCheck = new Map(mine.filter((e) => e.check).map((e) => [e.check, e]));
  const bad = (checks ?? []).filter(failed);
  const row = {
    scenario,
    kind: set.get(scenario) ?? 'not-in-set',
    ran: checks !== undefined,
    success: (checks ?? []).filter((c) => c.status === 'SUCCESS').length,
    failure: (checks ?? []).filter((c) => c.status === 'FAILURE').length,
    warning: (checks ?? []).filter((c) => c.status === 'WARNING').length,
    unexpected: [], // failing checks nothing lists
    stale: [], // listed checks that passed
    reasons: [],
  };
  if (!row.ran) {
    row.result = whole ? 'XFAIL' : 'FAIL';
    if (whole) row.reasons.push(whole.reason);
  } else if (whole) {
    row.result = bad.length > 0 ? 'XFAIL' : 'XPASS';
    row.reasons.push(whole.reason);
  } else {
    row.unexpected = bad.filter((c) => !byCheck.has(c.id));
    // A listed check that is absent or SKIPPED says nothing (the scenario
    // may have stopped before it); one that passed is a stale entry.
    for (const [id, entry] of byCheck) {
      const all = checks.filter((c) => c.id === id);
      if (all.some(failed)) row.reasons.push(`${id}: ${entry.reason}`);
      else if (all.some((c) => c.status === 'SUCCESS')) row.stale.push(id);
    }
    if (row.unexpected.length > 0) row.result = 'FAIL';
    else if (row.stale.length > 0) row.result = 'XPASS';
    else row.result = bad.length > 0 ? 'XFAIL' : 'PASS';
  }
  rows.push(row);
}

const width = Math.max(8, ...rows.map((r) => r.scenario.length));
const kindWidth = Math.max(8, ...rows.map((r) => r.kind.length));
const line = (cells) => cells.join('  ');
console.log(`\n${revision} (${setup}):`);
console.log(
  line([
    'scenario'.padEnd(width),
    'scored'.padEnd(kindWidth),
    'ok'.padStart(3),
    'fail'.padStart(4),
    'warn'.padStart(4),
    'result',
  ]),
);
console.log(line(['-'.repeat(width), '-'.repeat(kindWidth), '---', '----', '----', '------']));
for (const r of rows) {
  const counts = r.ran
    ? [String(r.success).padStart(3), String(r.failure).padStart(4), String(r.warning).padStart(4)]
    : ['  -', '   -', '   -'];
  let result = r.result;
  if (!r.ran) result += ' (no result: the scenario did not finish)';
  if (r.result === 'XFAIL') result += `  # ${r.reasons.join('; ')}`;
  if (r.result === 'XPASS' && r.stale.length === 0)
    result += '  (passes, but expected-failures.txt lists it: remove the entry)';
  if (r.stale.length > 0)
    result += `  (listed checks pass: ${r.stale.join(', ')}; remove their entries)`;
  console.log(line([r.scenario.padEnd(width), r.kind.padEnd(kindWidth), ...counts, result]));
}

const problems = rows.filter((r) => r.result === 'FAIL');
if (problems.length > 0) {
  console.log('\nUnexpected failures:');
  for (const r of problems) {
    console.log(
      `  ${r.scenario}${r.ran ? '' : ': no checks.json (crashed or timed out; see the log)'}`,
    );
    for (const c of r.unexpected) {
      console.log(`    [${c.status}] ${c.id}: ${c.description}`);
      if (c.errorMessage) console.log(`      ${c.errorMessage}`);
    }
  }
}

const count = (filter, result) => rows.filter((r) => filter(r) && r.result === result).length;
for (const [label, filter] of [
  ['required', (r) => r.kind === 'required'],
  ['not scored', (r) => r.kind !== 'required'],
]) {
  const total = rows.filter(filter).length;
  if (total === 0) continue;
  console.log(
    `conformance ${revision} (${setup}), ${label}: ${count(filter, 'PASS')} of ${total} passed, ` +
      `${count(filter, 'XFAIL')} failed as expected, ${count(filter, 'FAIL')} failed ` +
      `unexpectedly, ${count(filter, 'XPASS')} passed unexpectedly`,
  );
}
const all = () => true;
process.exit(count(all, 'FAIL') + count(all, 'XPASS') > 0 ? 1 : 0);
