// `npm run test:links`: every relative link and `#anchor` of README.md, CONTRIBUTING.md and
// docs/**/*.md resolves, offline. A link to a Markdown file must name a heading it has (GitHub's
// anchors: lower case, punctuation dropped, `-1` for a repeat); a link to any other path must name a
// file or folder of the repository. Addresses with a scheme (https:, mailto:) are not fetched.
// Also checks that the guides list (src/platform/guide-files.ts) and the Markdown files agree, since the
// README runner and the served guides read that list, and that the minimum Node.js of the code is the one
// package.json and the first pages name, with how to get it. One line per file, `N passed, N failed`;
// `--json FILE` writes {numPassedTests, numFailedTests} for .ci/run.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { guideLinks, headingAnchors } from '../../src/platform/guide-markdown.js';
import { GUIDE_FILES, isRelativeLink } from '../../src/platform/guide-files.js';
import { Report } from '../faults/report.js';

const ROOT = join(import.meta.dirname, '..', '..');

function markdownFiles(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const anchorCache = new Map<string, string[]>();
function anchorsOf(file: string): string[] {
  let anchors = anchorCache.get(file);
  if (!anchors) {
    anchors = headingAnchors(readFileSync(join(ROOT, file), 'utf8'));
    anchorCache.set(file, anchors);
  }
  return anchors;
}

/** What is wrong with one link of `file`, or null when it resolves. */
export function brokenLink(file: string, href: string): string | null {
  if (!isRelativeLink(href)) return null;
  const hash = href.indexOf('#');
  const path = hash < 0 ? href : href.slice(0, hash);
  const anchor = hash < 0 ? undefined : decodeURIComponent(href.slice(hash + 1));
  const target = path === '' ? file : posix.normalize(posix.join(posix.dirname(file), decodeURIComponent(path)));
  if (target.startsWith('../') || target.startsWith('/')) return `${href}: outside the repository`;
  if (!existsSync(join(ROOT, target))) return `${href}: no file ${target}`;
  if (anchor === undefined) return null;
  if (!target.endsWith('.md') || statSync(join(ROOT, target)).isDirectory()) return `${href}: an anchor into a file that is not Markdown`;
  return anchorsOf(target).includes(anchor) ? null : `${href}: ${target} has no heading with the anchor #${anchor}`;
}

function main(): number {
  const jsonFlag = process.argv.indexOf('--json');
  const jsonFile = jsonFlag >= 0 ? process.argv[jsonFlag + 1] : undefined;
  const files = ['README.md', 'CONTRIBUTING.md', ...markdownFiles('docs')].filter((file) => existsSync(join(ROOT, file)));
  const report = new Report();

  report.section('The guides list (src/platform/guide-files.ts) and the Markdown files');
  const listed = new Set<string>(GUIDE_FILES);
  const missing = GUIDE_FILES.filter((file) => !existsSync(join(ROOT, file)));
  report.check('every listed guide exists', missing.length === 0, missing.join(', '));
  const unlisted = files.filter((file) => !listed.has(file));
  report.check('every Markdown file of README.md, CONTRIBUTING.md and docs/ is listed', unlisted.length === 0, unlisted.join(', '));

  // The Node.js the entry points require (src/node-version.ts), as package.json, .nvmrc and the two pages a newcomer reads first say it, with how to get it.
  report.section('The Node.js the code requires, where a newcomer reads it');
  const required = /major < (\d+) \|\| \(major === (\d+) && minor < (\d+)\)/.exec(readFileSync(join(ROOT, 'src/node-version.ts'), 'utf8'));
  const minimum = required ? `${required[1]}.${required[3]}` : '?';
  const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines?.node;
  report.check(
    `package.json engines.node is >=${minimum}.0`,
    required !== null && required[1] === required[2] && engines === `>=${minimum}.0`,
    `engines.node: ${engines}`,
  );
  const nvmrc = Number(readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim());
  report.check(`.nvmrc names a major version at or over ${minimum}`, nvmrc >= Number(required?.[1]), `.nvmrc: ${nvmrc}`);
  for (const page of ['README.md', 'docs/getting-started.md']) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const lacks = [`Node.js ${minimum} or newer`, 'nvm install', 'brew install node', 'winget install', 'nodejs.org'].filter(
      (phrase) => !text.replace(/\*\*/g, '').includes(phrase),
    );
    report.check(`${page} names Node.js ${minimum} and how to get it`, lacks.length === 0, lacks.length > 0 ? `missing: ${lacks.join(', ')}` : '');
  }

  report.section(`Relative links and anchors (${files.length} files)`);
  for (const file of files) {
    const links = guideLinks(readFileSync(join(ROOT, file), 'utf8'));
    const broken = links.flatMap(({ href, line }) => {
      const problem = brokenLink(file, href);
      return problem ? [`${file}:${line} ${problem}`] : [];
    });
    const relative = links.filter(({ href }) => isRelativeLink(href)).length;
    report.check(`${file} (${relative} relative links)`, broken.length === 0, broken.join('\n'));
  }

  const { passed, failed } = report.summary();
  console.log(`\n${passed} passed, ${failed} failed`);
  if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ numPassedTests: passed, numFailedTests: failed }));
  return failed === 0 && passed > 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) process.exit(main());
