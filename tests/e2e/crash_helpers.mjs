// What the crash tests (crash_*.test.mjs) share: their catalog, a kill -9
// that waits for the process to be gone, and checks of what is on disk.
//
// tests/data/e2e/crash/catalog.json: gen_block ends its text with
// "end of <count>", so a stored result is whole exactly when it ends with its
// own count; append_steps appends a line to a file every 0.2 s; slow_call
// reports progress for 3 s. Offloading from 8192 bytes on.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { DATA_DIR, genCharsText, short, sleep } from './helpers.mjs';

export const CATALOG = path.join(DATA_DIR, 'crash', 'catalog.json');

/** What gen_block prints for `count`. */
export const blockText = (count) => `${genCharsText(count)}\nend of ${count}\n`;

/** SIGKILL, and waits until the process is gone. */
export async function kill9(server) {
  server.child.kill('SIGKILL');
  const exit = await server.exited;
  assert.equal(exit.signal, 'SIGKILL', `toolmux was not killed but exited with ${JSON.stringify(exit)}`);
}

/**
 * Waits until `predicate()` holds (polled every millisecond or so) or `ms`
 * have passed; returns which.
 */
export async function whenOrAfter(predicate, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (predicate()) return 'when';
    await sleep(1);
  }
  return 'after';
}

/** True while process `pid` has a file in `dir` open other than big.txt: named, or unnamed (O_TMPFILE). */
export function writingIn(pid, dir) {
  for (const fd of namesIn(`/proc/${pid}/fd`)) {
    let target;
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    if (target.startsWith(`${dir}/`) && target !== `${dir}/big.txt`) return true;
  }
  return false;
}

/** The names in `dir`, [] when it does not exist. */
export const namesIn = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);

/** Asserts that a (large) text is `expected`, without printing either whole. */
export function assertSameText(actual, expected, what) {
  if (actual === expected) return;
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i++;
  assert.fail(`${what}: ${actual.length} UTF-16 units, expected ${expected.length}; first difference at ${i}: ${JSON.stringify(actual.slice(i, i + 60))}`);
}

/** Reads a stored result whole as its resource. */
export async function readResource(client, id) {
  const read = await client.readResource({ uri: `toolmux://results/${id}` });
  assert.equal(read.contents.length, 1, short(read));
  return read.contents[0].text;
}
