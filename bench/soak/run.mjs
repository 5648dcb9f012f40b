#!/usr/bin/env node
// The soak: `--sessions` HTTP sessions × `--calls` calls of mixed tools
// against one `toolmux serve --http` (see soak.mjs and README.md). Prints
// progress every `--sample` seconds, then a summary and one JSON line
// (starting {"bench":"soak"). Exits 1 when any answer was wrong.
//
// Usage: node bench/soak/run.mjs [--build DIR] [--sessions 64] [--calls 20000] [--sample S]

import path from 'node:path';

import { REPO_ROOT, toolmuxVersion } from '../lib/common.mjs';
import { runSoak } from './soak.mjs';

const options = { build: path.join(REPO_ROOT, 'build'), sessions: 64, calls: 20000, sample: 5 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  const value = () => {
    if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
    return argv[++i];
  };
  if (arg === '--build') options.build = path.resolve(value());
  else if (arg === '--sessions') options.sessions = Number.parseInt(value(), 10);
  else if (arg === '--calls') options.calls = Number.parseInt(value(), 10);
  else if (arg === '--sample') options.sample = Number(value());
  else if (arg === '--help' || arg === '-h') {
    console.log('Usage: node bench/soak/run.mjs [--build DIR] [--sessions 64] [--calls 20000] [--sample S]');
    process.exit(0);
  } else throw new Error(`unknown argument ${arg}`);
}

const bin = path.join(options.build, 'toolmux');
const version = await toolmuxVersion(bin);
console.log(`${version}: ${options.sessions} sessions × ${options.calls} calls`);
const result = await runSoak({
  bin,
  sessions: options.sessions,
  calls: options.calls,
  sampleMs: options.sample * 1000,
  log: (line) => console.log(line),
});
const mib = (kb) => (kb === null ? 'n/a' : `${(kb / 1024).toFixed(1)} MiB`);
const load = (l) => l.map((x) => x.toFixed(2)).join(' ');
console.log(`calls: ${result.calls} (steps by kind: ${JSON.stringify(result.byKind)})`);
console.log(`errors: ${result.errors}`);
for (const e of result.firstErrors) console.log(`  ${JSON.stringify(e)}`);
console.log(`time: ${result.seconds.toFixed(1)} s, ${result.callsPerSecond.toFixed(0)} calls/s`);
console.log(
  `RSS: at start ${mib(result.rss.firstKb)}; after warm-up (10% of the calls) first ${mib(result.rss.warmFirstKb)}, ` +
    `last ${mib(result.rss.lastKb)}, max ${mib(result.rss.warmMaxKb)}; max overall ${mib(result.rss.maxKb)}`,
);
console.log(`load average (1/5/15 min): at start ${load(result.load.start)}, at the end ${load(result.load.end)}`);
console.log(`server exit on SIGTERM: ${JSON.stringify(result.exit)}`);
const { samples, ...rss } = result.rss;
console.log(JSON.stringify({ bench: 'soak', version, ...result, rss, samples: samples.length }));
process.exit(result.errors === 0 && result.calls === options.sessions * options.calls ? 0 : 1);
