/**
 * The README says what is true: its values table is the one scripts/ship/gen/values-table.ts makes from
 * infra/values.schema.json, the release files it names carry package.json's version, and every
 * relative link in it and in docs/development.md reaches a file (and a heading, when it names one).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { expectedReadme, README_FILE, TABLE_BEGIN, TABLE_END } from '../../scripts/ship/gen/values-table-text.js';

const DOCS = ['README.md', 'docs/development.md'];

/** The text outside fenced code blocks and code spans, where a Markdown link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as '-', repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    result.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return result;
}

/** Each relative link of `file` that reaches no file, or no heading of the file it names. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const [, target] of prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto:
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const resolved = path === '' ? file : join(dirname(file), path);
    if (!existsSync(resolved)) broken.push(`${target}: no file ${resolved}`);
    else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${target}: ${resolved} has no heading #${anchor}`);
    }
  }
  return broken;
}

describe('README.md', () => {
  it('holds the values table made from infra/values.schema.json', () => {
    // expectedReadme() differs from the README in the table only: compare the tables, for a short diff.
    const table = (text: string) => text.slice(text.indexOf(TABLE_BEGIN), text.indexOf(TABLE_END));
    assert.equal(table(readFileSync(README_FILE, 'utf8')), table(expectedReadme()), 'run `npx tsx scripts/ship/gen/values-table.ts`');
  });

  it('scripts/ship/gen/values-table.ts --check reports no drift (exit 0)', { timeout: 60_000 }, () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/ship/gen/values-table.ts', '--check'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
  });

  it("names the release's files with package.json's version", () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const named = [...readFileSync(README_FILE, 'utf8').matchAll(/echoperator(?:-ts:|-)(\d+\.\d+\.\d+)/g)].map((m) => m[1]);
    assert.ok(named.length > 0, 'the README names no release file');
    assert.deepEqual([...new Set(named)], [version]);
  });
});

describe('relative links', () => {
  for (const file of DOCS) {
    it(`in ${file} each reach a file and heading`, () => {
      assert.deepEqual(brokenLinks(file), []);
    });
  }

  it('are found, anchors included (a check that finds nothing proves nothing)', () => {
    const links = DOCS.flatMap((f) => [...prose(readFileSync(f, 'utf8')).matchAll(/\]\((?!https?:)[^)\s]*#[^)\s]+\)/g)]);
    assert.ok(links.length >= 5, `only ${links.length} relative links with an anchor`);
  });
});
