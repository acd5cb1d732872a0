import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../core/config.js';
import { CONFIGURATION_DOC, configTable, withConfigTable } from '../../infra/docs/config-table.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('docs/configuration.md', () => {
  it('holds exactly the table `npm run docs:config` generates from the config schema', () => {
    const document = readFileSync(CONFIGURATION_DOC, 'utf8');
    expect(document, 'run `npm run docs:config` after changing core/config.ts').toBe(withConfigTable(document));
  });

  it('lists every setting of the schema, each with a description', () => {
    const table = configTable();
    for (const name of Object.keys(configSchema.shape)) expect(table).toContain(`| \`${name}\` |`);
    expect(table).toContain('| `WEBHOOK_INCLUDE_FROM_ME` | `false` |');
  });
});

/** The documents whose relative links must resolve: the front page, docs/, the sandbox's README. */
function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', 'sandbox/README.md', ...docs.map((name) => `docs/${name}`)].map((path) => join(ROOT, path));
}

function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** Markdown text without code blocks and inline code, where a `[x](y)` is no link. */
function prose(markdown: string): string {
  return withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of withoutCodeBlocks(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count ? `${base}-${count}` : base);
  }
  return out;
}

describe('relative links of README.md, docs/ and sandbox/README.md', () => {
  it('each names an existing file, and a heading of it when it has an anchor', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of documents()) {
      const text = readFileSync(file, 'utf8');
      for (const [, target] of prose(text).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue;
        checked++;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const linked = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
        const where = `${relative(ROOT, file)} -> ${target}`;
        if (!existsSync(linked)) broken.push(`${where} (no such file)`);
        else if (anchor && statSync(linked).isFile() && linked.endsWith('.md') && !anchors(readFileSync(linked, 'utf8')).has(anchor)) {
          broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
