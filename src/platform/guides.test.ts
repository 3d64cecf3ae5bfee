import { guideLinks, headingAnchors, renderGuide } from './guide-markdown.js';
import { GUIDE_FILES, guideUrl, servedHref } from './guide-files.js';

describe('guide anchors', () => {
  it('are GitHub’s: lower case, punctuation and markup dropped, spaces to dashes, repeats numbered', () => {
    const source = [
      '# Voice',
      '## Speech to speech on Gemini Live (sts, google)',
      '## Calls: reading and exporting',
      '## The `events` table › what it holds',
      '## Events',
      '## Events',
      '```sh',
      '# a comment in a block, not a heading',
      '```',
    ].join('\n');
    expect(headingAnchors(source)).toEqual([
      'voice',
      'speech-to-speech-on-gemini-live-sts-google',
      'calls-reading-and-exporting',
      'the-events-table--what-it-holds',
      'events',
      'events-1',
    ]);
  });
});

describe('guide links', () => {
  it('are the links of the text, not of code', () => {
    const links = guideLinks('See [Voice](voice.md#inbound-calls) and <https://example.com>.\n\n```\n[not](a-link.md)\n```\n`[nor](this.md)`');
    expect(links).toEqual([
      { href: 'voice.md#inbound-calls', line: 1 },
      { href: 'https://example.com', line: 1 },
    ]);
  });

  it('point to the served page of the guide they name, resolved from the page they are in', () => {
    expect(servedHref('docs/calls-and-carriers.md', 'voice.md#inbound-calls')).toBe('/docs/guides/voice#inbound-calls');
    expect(servedHref('README.md', 'docs/voice.md')).toBe('/docs/guides/voice');
    expect(servedHref('docs/README.md', '../CONTRIBUTING.md')).toBe('/docs/guides/contributing');
    expect(servedHref('docs/development/carriers.md', 'testing.md')).toBe('/docs/guides/development/testing');
    expect(servedHref('docs/development/carriers.md', '../README.md')).toBe('/docs/guides');
    expect(servedHref('docs/voice.md', '#barge-in')).toBe('#barge-in');
    expect(servedHref('docs/voice.md', 'https://ai.google.dev/api/live')).toBe('https://ai.google.dev/api/live');
    expect(servedHref('docs/voice.md', '../src/modules/voice/streaming/streaming-call.ts')).toBeNull();
  });

  it('gives every guide its own address', () => {
    const urls = GUIDE_FILES.map(guideUrl);
    expect(new Set(urls).size).toBe(urls.length);
    expect(guideUrl('README.md')).toBe('/docs/guides/readme');
    expect(guideUrl('docs/README.md')).toBe('/docs/guides');
  });
});

describe('a rendered guide', () => {
  it('shows HTML written in the Markdown as text, and refuses script URLs', () => {
    const { html } = renderGuide(
      'docs/x.md',
      '# Title\n\n<script>alert(1)</script>\n\nA <img src=x onerror=alert(1)> [click](javascript:alert(1)) [data](data:text/html;base64,PHNjcmlwdD4=)',
    );
    expect(html).not.toMatch(/<script|<img|href="(javascript|data):/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('has its title from the first heading and GitHub’s anchors as heading ids', () => {
    const { title, html } = renderGuide(
      'docs/voice.md',
      '# Voice\n\n## Inbound calls\n\n## Inbound calls\n\nSee [the README](../README.md#a-five-minute-tour).',
    );
    expect(title).toBe('Voice');
    expect(html).toContain('<h2 id="inbound-calls">');
    expect(html).toContain('<h2 id="inbound-calls-1">');
    expect(html).toContain('<a href="/docs/guides/readme#a-five-minute-tour">');
  });

  it('aligns table columns with classes, not inline styles (the policy refuses those)', () => {
    const { html } = renderGuide('docs/x.md', '| a | b |\n|:-:|--:|\n| 1 | 2 |');
    expect(html).not.toContain('style=');
    expect(html).toContain('<th class="align-center">a</th>');
    expect(html).toContain('<td class="align-right">2</td>');
  });

  it('shows a link to a file the gateway does not serve as its text', () => {
    const { html } = renderGuide('docs/voice.md', '# Voice\n\nThe [fake](../test/support/fake-deepgram.ts).');
    expect(html).toContain('<a title="a file of the repository, not served here">fake</a>');
  });
});
