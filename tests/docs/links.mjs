#!/usr/bin/env node
// Every relative link in the repository's Markdown files resolves: the file
// (or folder) it names exists, and a #fragment names a heading of the Markdown
// file it points into (GitHub's anchors: the heading's text in lower case,
// punctuation dropped, spaces as hyphens, "-1", "-2", ... for repeats). Links
// with a scheme (https:, mailto:) and links inside code are not checked.
// Prints each broken link with its file and line and exits 1 when there is any.
//
// Usage: node tests/docs/links.mjs [REPO_ROOT]   (CTest entry docs_links)

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '../..'));

// Markdown files of the project: not in dot folders, node_modules or build trees.
function markdownFiles(dir, found = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules' || /^build/.test(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) markdownFiles(full, found);
    else if (entry.isFile() && entry.name.endsWith('.md')) found.push(full);
  }
  return found;
}

// The lines outside fenced code blocks, each with its 1-based number.
function proseLines(text) {
  const lines = [];
  let fence = null;
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line);
    if (marker) {
      if (fence === null) fence = marker[1];
      else if (marker[1].startsWith(fence)) fence = null;
      return;
    }
    if (fence === null) lines.push({ line, number: i + 1 });
  });
  return lines;
}

function slug(heading) {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map();
function anchorsOf(file) {
  if (!anchorCache.has(file)) {
    const anchors = new Set();
    const seen = new Map();
    for (const { line } of proseLines(fs.readFileSync(file, 'utf8'))) {
      const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (!heading) continue;
      const base = slug(heading[1]);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    anchorCache.set(file, anchors);
  }
  return anchorCache.get(file);
}

const problems = [];
const files = markdownFiles(root);
let checked = 0;
for (const file of files) {
  const where = path.relative(root, file);
  for (const { line, number } of proseLines(fs.readFileSync(file, 'utf8'))) {
    const prose = line.replace(/`[^`]*`/g, '');
    const targets = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
    const reference = /^\s*\[[^\]]+\]:\s+<?(\S+?)>?(\s|$)/.exec(prose);
    if (reference) targets.push(reference[1]);
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      checked++;
      const hash = target.indexOf('#');
      const filePart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const fragment = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
      const resolved = filePart === '' ? file : path.resolve(path.dirname(file), filePart);
      if (!resolved.startsWith(root + path.sep) && resolved !== root) {
        problems.push(`${where}:${number}: ${target}: points outside the repository`);
        continue;
      }
      if (!fs.existsSync(resolved)) {
        problems.push(`${where}:${number}: ${target}: ${path.relative(root, resolved)} does not exist`);
        continue;
      }
      if (fragment !== null && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment)) {
        problems.push(`${where}:${number}: ${target}: ${path.relative(root, resolved)} has no heading #${fragment}`);
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`${problems.length} broken link(s) in the Markdown files:\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`docs links: ${checked} relative links in ${files.length} Markdown files, all resolve`);
