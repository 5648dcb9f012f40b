// A reduced soak (bench/soak, whose full run is 64 sessions × 20,000 calls):
// 8 HTTP sessions × 300 calls of mixed tools against one server, every
// answer the expected one, and the server's memory not growing past a
// generous bound after the warm-up.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { runSoak } from '../../bench/soak/soak.mjs';
import { TOOLMUX_BIN, requireBinary } from './helpers.mjs';

const SESSIONS = 8;
const CALLS = 300;
// RSS may grow this much from the first sample after the warm-up (10% of the
// calls) to the end: thread stacks and allocator arenas settle early; a leak
// of even 10 KB a call would pass it.
const GROWTH_KB = 32 * 1024;
// Set by scripts/sanitize.sh: under ASan the allocator holds freed memory back
// (its quarantine, up to 256 MB) and TSan keeps shadow memory, so RSS says
// nothing about leaks there; LeakSanitizer checks this server at its exit instead.
const SANITIZER = process.env.TOOLMUX_E2E_SANITIZER;

test(`soak: ${SESSIONS} HTTP sessions × ${CALLS} calls of mixed tools, zero errors, memory flat`, async (t) => {
  requireBinary();
  const result = await runSoak({ bin: TOOLMUX_BIN, sessions: SESSIONS, calls: CALLS, sampleMs: 250 });
  const { samples, ...rss } = result.rss;
  t.diagnostic(
    `${result.calls} calls in ${result.seconds.toFixed(1)} s (${result.callsPerSecond.toFixed(0)} calls/s); ` +
      `RSS kB ${JSON.stringify(rss)}; ${samples.length} samples; steps ${JSON.stringify(result.byKind)}`,
  );
  assert.deepEqual(result.firstErrors, [], `${result.errors} wrong answers`);
  assert.equal(result.errors, 0);
  assert.equal(result.calls, SESSIONS * CALLS);
  for (const kind of ['echo', 'native', 'search', 'offload', 'invalid', 'unknown']) {
    assert.ok(result.byKind[kind] > 0, `no ${kind} call was made: ${JSON.stringify(result.byKind)}`);
  }
  assert.ok(rss.warmFirstKb !== null && rss.lastKb !== null, `no RSS samples after the warm-up: ${JSON.stringify(samples)}`);
  if (SANITIZER) {
    t.diagnostic(`RSS growth not checked: the server runs under ${SANITIZER} sanitizer`);
  } else {
    assert.ok(
      rss.lastKb - rss.warmFirstKb <= GROWTH_KB,
      `RSS grew from ${rss.warmFirstKb} kB after the warm-up to ${rss.lastKb} kB: more than ${GROWTH_KB} kB`,
    );
  }
  assert.deepEqual(result.exit, { code: 0, signal: null }, 'the server did not stop cleanly on SIGTERM');
});
