import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const base = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/**
 * The relative links of Markdown files (outside code blocks) that do not resolve: to no file under `root`, leaving
 * `root`, or to a heading the target lacks. Links with a scheme (https:, mailto:) are left alone.
 */
export function brokenLinks(root: string, files: readonly string[]): { links: number; broken: string[] } {
  const broken: string[] = [];
  let links = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = m[1]!;
      if (/^[a-z]+:/i.test(link)) continue;
      links++;
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? file : resolve(dirname(file), path);
      const where = relative(root, file);
      if (relative(root, target).startsWith('..') || !existsSync(target)) {
        broken.push(`${where}: ${link} (no such file)`);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${where}: ${link} (no such heading)`);
    }
  }
  return { links, broken };
}
