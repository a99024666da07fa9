/**
 * A project rule the offline demo model follows when its system prompt holds one (s06 puts the
 * project's AGENTS.md there; s01–s05 send no such thing): "After fixing a bug, add a line to
 * CHANGELOG.md under `## Unreleased`: `- Fixed: <what was wrong> (<file>)`". Remove the rule from
 * AGENTS.md and the model does not touch CHANGELOG.md.
 */
import type { Call } from './conversation.ts';

export interface Rule {
  file: string;
  heading: string;
  template: string;
  /** The instruction file it came from, as s06 heads it: `## /path/AGENTS.md` → AGENTS.md. */
  source: string;
}

/** The rule, read from the system prompt: a line naming a changelog, a heading and a template. */
export function readRule(system: string): Rule | undefined {
  let source = 'the project instructions';
  for (const line of system.split('\n')) {
    const file = line.match(/\b(CHANGELOG(?:\.md)?)\b/)?.[1];
    const heading = line.match(/`(#{1,6} [^`]+)`/)?.[1];
    // Patterns that cannot try each split of a long line: up to the first <, the last /.
    const template = line.match(/`(- [^`<]*<[^`>]+>[^`]*)`/)?.[1];
    source = line.match(/^## (?:\S*\/)?([^/\s]+\.md)$/)?.[1] ?? source;
    if (file && heading && template && /\bfix/i.test(line)) {
      return { file, heading, template, source };
    }
  }
  return undefined;
}

/** The rule's line for this fix: each <placeholder> filled, the file in the one that asks. */
export function fillTemplate(rule: Rule, what: string, file: string): string {
  return rule.template.replace(/<([^>]+)>/g, (_, name: string) =>
    /\b(?:file|path)\b/i.test(name) ? file : what,
  );
}

export const ruleNote = (rule: Rule, line: string) =>
  `Added to ${rule.file} under ${rule.heading}, as the project's instructions ask: “${line}”.`;

/** The line a note says was added, if it says so. */
export const readRuleNote = (text: string) => text.match(/Added to \S+ under .+?: “(.+?)”\./)?.[1];

/** The line an edit of the changelog added, if it is one and it applied. */
export function addedBy(call: Call, rule: Rule): string | undefined {
  const { file_path: file, old_string: old, new_string: added } = call.input;
  if (call.name !== 'edit_file' || file !== rule.file || call.result?.isError) return undefined;
  return String(added).split('\n').find((line) => !String(old).includes(line) && line.trim());
}

/**
 * Where the line goes, from the changelog as read (line number → text): first in the list under
 * the heading, or right under the heading if it has none. The edit's old and new text.
 */
export function placeLine(rule: Rule, lines: Map<number, string>, entry: string) {
  const numbered = [...lines].sort(([a], [b]) => a - b);
  const at = numbered.findIndex(([, text]) => text.trim() === rule.heading);
  if (at === -1) return undefined;
  const section = numbered.slice(at + 1);
  const end = section.findIndex(([, text]) => /^#{1,6} /.test(text));
  const first = section.slice(0, end === -1 ? undefined : end).find(([, t]) => t.startsWith('- '));
  if (first) return { old: first[1], new: `${entry}\n${first[1]}` };
  return { old: rule.heading, new: `${rule.heading}\n\n${entry}` };
}
