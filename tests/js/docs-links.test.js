// The README and docs/*.md link each other: every relative link names a file of the repository,
// and a #fragment into a Markdown file one of its headings (as GitHub makes anchors of them), so
// that moving a file or renaming a section fails here rather than on a reader.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';

import { documentationFiles } from './readme-blocks.js';

const repo = process.env.ATTN_REPO;
const withoutCode = (markdown) => markdown.replace(/^```[\s\S]*?^```/gm, '');

// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
const anchor = (heading) => heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').trim().replace(/\s/g, '-');
const anchors = (markdown) => [...withoutCode(markdown).matchAll(/^#+\s+(.*)$/gm)].map((m) => anchor(m[1]));

for (const file of documentationFiles(repo)) {
  test(`${file}: its relative links reach existing files and headings`, () => {
    const text = readFileSync(join(repo, file), 'utf8');
    const links = [...withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    for (const link of links.filter((l) => !/^[a-z]+:/.test(l))) {
      const [path, fragment] = link.split('#');
      const target = path ? join(repo, dirname(file), path) : join(repo, file);
      assert.ok(existsSync(target), `${file} links to ${link}: no such file`);
      if (fragment && target.endsWith('.md')) {
        assert.ok(anchors(readFileSync(target, 'utf8')).includes(fragment), `${file} links to ${link}: no such heading`);
      }
    }
  });
}
