/**
 * CHANGELOG.md (Keep a Changelog: a `## [x.y.z] - YYYY-MM-DD` section per version, newest first)
 * read for a release: the section of the version being released goes into its README.md, so the
 * notes a user reads are the ones the project keeps. A version without a section, or with an
 * empty one, is an error naming it: a release must say what it changed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const CHANGELOG_FILE = 'CHANGELOG.md';

/** A version heading: `## [0.2.0] - 2026-11-29`, or `## [Unreleased]`. */
const HEADING = /^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?\s*$/;
/** A link reference definition (`[0.2.0]: https://...`), which ends the last section. */
const LINK_DEFINITION = /^\[[^\]]+\]: \S+$/;

export interface ChangelogSection {
  version: string;
  /** The release date of the heading; none for [Unreleased]. */
  date?: string;
  /** The text under the heading, trimmed: its paragraphs and `###` subsections. */
  body: string;
}

/** Every version section of a changelog's text, in the file's order. */
export function changelogSections(text: string): ChangelogSection[] {
  const sections: ChangelogSection[] = [];
  let current: { version: string; date?: string; lines: string[] } | undefined;
  const close = (): void => {
    if (current) sections.push({ version: current.version, date: current.date, body: current.lines.join('\n').trim() });
  };
  for (const line of text.split('\n')) {
    const heading = HEADING.exec(line);
    if (heading) {
      close();
      current = { version: heading[1]!, date: heading[2], lines: [] };
    } else if (/^#{1,2} /.test(line) || LINK_DEFINITION.test(line)) {
      close();
      current = undefined;
    } else current?.lines.push(line);
  }
  close();
  return sections;
}

/** The dated section of `version`, or an error saying what to add. */
export function changelogSection(text: string, version: string, file = CHANGELOG_FILE): ChangelogSection {
  const section = changelogSections(text).find((s) => s.version === version);
  const add = `add "## [${version}] - YYYY-MM-DD" with what it changed`;
  if (!section) throw new Error(`${file} has no section for ${version}: ${add}`);
  if (!section.date) throw new Error(`${file}'s section for ${version} has no date: write "## [${version}] - YYYY-MM-DD"`);
  if (!section.body) throw new Error(`${file}'s section for ${version} is empty: ${add}`);
  return section;
}

/** The section of `version` in the CHANGELOG.md of the tree at `root`. */
export function readChangelogSection(root: string, version: string): ChangelogSection {
  return changelogSection(readFileSync(join(root, CHANGELOG_FILE), 'utf8'), version);
}
