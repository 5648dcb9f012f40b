// Reads what `conformance client --requirements REVISION -o DIR` wrote (one
// DIR/<scenario>-<time>/checks.json per scenario) and prints, for that
// revision, how many of the required client scenarios passed and which
// failed, and how the scenarios named after --must-pass did. Used by
// run_client.sh.
//
//   node client_report.mjs REVISION RESULTS_DIR [--must-pass SCENARIO...]
//
// A scenario passes when none of its checks is FAILURE or WARNING (the
// suite's rule). Exit status 1 when a --must-pass scenario did not pass or
// has no result; 2 on bad input. The required scenarios are judged by the
// suite itself (its --expected-failures baseline), not here.
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const [revision, resultsDir, flag, ...mustPass] = process.argv.slice(2);
if (!revision || !resultsDir || (flag !== undefined && flag !== '--must-pass')) {
  console.error('usage: node client_report.mjs REVISION RESULTS_DIR [--must-pass SCENARIO...]');
  process.exit(2);
}
const file = join(here, 'node_modules', 'conformance-next', 'requirements', `${revision}.yaml`);
if (!existsSync(file)) {
  console.error(`conformance: no requirement set for revision "${revision}"`);
  process.exit(2);
}
const required = YAML.parse(readFileSync(file, 'utf8')).client ?? [];

// DIR/<scenario>-<ISO time with ':' and '.' as '-'>/checks.json; a scenario
// name may hold '/' (auth/...), so its folder is nested.
const stamp = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;
function checksOf(scenario) {
  const slash = scenario.lastIndexOf('/');
  const dir = join(resultsDir, scenario.slice(0, slash + 1));
  const base = scenario.slice(slash + 1);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return undefined;
  const runs = readdirSync(dir)
    .filter((d) => stamp.test(d) && d.replace(stamp, '') === base)
    .sort();
  if (runs.length === 0) return undefined;
  try {
    return JSON.parse(readFileSync(join(dir, runs[runs.length - 1], 'checks.json'), 'utf8'));
  } catch {
    return undefined;
  }
}
const failed = (c) => c.status === 'FAILURE' || c.status === 'WARNING';
const verdict = (scenario) => {
  const checks = checksOf(scenario);
  if (!checks) return 'no result';
  const bad = checks.filter(failed);
  return bad.length === 0 ? 'pass' : `fail: ${[...new Set(bad.map((c) => c.id))].join(', ')}`;
};

const results = required.map((s) => [s, verdict(s)]);
const passed = results.filter(([, v]) => v === 'pass').length;
console.log(`client ${revision}: ${passed} of ${required.length} required scenarios pass`);
for (const [s, v] of results) if (v !== 'pass') console.log(`  ${s}: ${v}`);
let rc = 0;
for (const s of mustPass) {
  const v = verdict(s);
  console.log(`  ${s} (extension): ${v}`);
  if (v !== 'pass') rc = 1;
}
process.exit(rc);
