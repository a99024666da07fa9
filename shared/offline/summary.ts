/**
 * The offline demo model's summaries, for s05's compaction: s05 sends the conversation as text
 * (`USER: …`, `ASSISTANT: …`, `ASSISTANT called …`, `RESULT of …`), then `---` and the ask, with
 * no tools. The summary is made from that text, under the six headings the ask names, and says
 * whether the task is finished and what comes next, so that the model can go on from it alone.
 * A focus (`/compact <focus>`, or the model's own) is said, and the lines about it are kept.
 */
import { head } from '../text.ts';
import { readResult, readUserText, type Call, type Entry } from './conversation.ts';
import type { Facts } from './fix-facts.ts';
import { factSentences, knownFacts, nextStep, readFacts } from './fix-the-test.ts';
import { callKind, fileOf } from './looking.ts';
import { currentTask } from './tasks.ts';

const KINDS = /^(?:USER: |ASSISTANT: |ASSISTANT called |RESULT of )/;

/** The conversation back from s05's text form, as entries (calls with their results). */
export function readTranscript(transcript: string): Entry[] {
  const body = transcript.replace(/^\[\d+ earlier messages left out[^\]]*\]\n\n/, '');
  const pieces = body.split(/\n\n(?=USER: |ASSISTANT: |ASSISTANT called |RESULT of )/);
  const entries: Entry[] = [];
  const pending: Call[] = [];
  pieces.forEach((piece, i) => {
    if (!KINDS.test(piece)) return;
    if (piece.startsWith('USER: ')) {
      const text = piece.slice('USER: '.length).trim();
      if (!text.startsWith('<context>')) entries.push(...readUserText(text));
    } else if (piece.startsWith('ASSISTANT: ')) {
      const final = !(pieces[i + 1] ?? '').startsWith('ASSISTANT called ');
      entries.push({ kind: 'note', text: piece.slice('ASSISTANT: '.length).trim(), final });
    } else if (piece.startsWith('ASSISTANT called ')) {
      const [, name = '', json = '{}'] = piece.match(/^ASSISTANT called (\S+) ?([\s\S]*)$/) ?? [];
      const call: Call = { id: `t${i}`, name, input: parseInput(json) };
      pending.push(call);
      entries.push({ kind: 'call', call });
    } else {
      // RESULT of read_file {"file_path":"a.js"} (an error):\n…
      const [head, ...rest] = piece.split('\n');
      const name = head.slice('RESULT of '.length).split(' ')[0];
      const at = pending.findIndex((call) => call.name === name);
      if (at === -1) return;
      const [call] = pending.splice(at, 1);
      call.result = readResult(rest.join('\n'), head.endsWith(' (an error):'));
    }
  });
  return entries;
}

function parseInput(json: string): Record<string, any> {
  try {
    return JSON.parse(json);
  } catch {
    return {}; // cut at 200 characters by s05: no input to read
  }
}

export function summarise(request: string): string {
  const cut = request.lastIndexOf('\n\n---\n');
  const transcript = cut === -1 ? request : request.slice(0, cut);
  const ask = cut === -1 ? '' : request.slice(cut + '\n\n---\n'.length);
  const focus = ask.match(/^The (user|assistant) asked to keep in particular: (.+)$/m);
  const entries = readTranscript(transcript);
  const notes = entries.flatMap((e) => (e.kind === 'note' ? [e.text] : []));
  const calls = entries.flatMap((e) => (e.kind === 'call' ? [e.call] : []));
  const [state, next, known] = whereItStands(entries, calls);
  // What its notes said, and what the last results showed that no note says yet.
  const learned = [...notes.flatMap(factSentences), ...(known ? knownFacts(known) : [])];
  const facts = [...new Set(learned)];
  const list = (lines: string[]) => (lines.length ? lines.map((l) => `- ${l}`) : ['- (none)']);

  // A summary of a summary: what the earlier one listed is still true, and not in the calls.
  const earlier = (heading: string) => notes.flatMap((note) => section(note, heading));
  const requests = [
    ...earlier('1. Requests'),
    ...entries.flatMap((e) => (e.kind === 'prompt' ? [head(e.text, 300)] : [])),
  ];
  const errors = [
    ...earlier('3. Errors'),
    ...facts.filter((f) => /^The failing test is |^The edit of /.test(f)),
    ...calls
      .filter((c) => c.result?.isError)
      .map((c) => `${c.name} ${fileOf(c) ?? ''}: ${head(c.result!.text.split('\n')[0], 160)}`),
  ];
  const decided = /^(?:The test calls|\S+\.md(?::\d+)? says|The line to change|Edited|Added to)/;
  const decisions = facts.filter((f) => decided.test(f));
  const kept = focus ? keptForFocus(focus[1], focus[2], entries) : [];
  return [
    'Summary of the conversation so far, made from it by the offline demo model.',
    '',
    '1. Requests',
    ...list([...new Set(requests)]),
    '2. Files',
    ...list(withEarlier(earlier('2. Files'), filesOf(calls, known))),
    '3. Errors',
    ...list([...new Set(errors)]),
    '4. Decisions',
    ...list(decisions),
    '5. State',
    ...list([...state, ...facts]),
    ...kept,
    '6. Next step',
    ...list([next]),
  ].join('\n');
}

/** The lines of a section of an earlier summary (in a note that holds one), but "(none)". */
function section(note: string, heading: string): string[] {
  if (!note.includes('\nSummary of the conversation so far')) return [];
  const at = note.indexOf(`\n${heading}\n`);
  if (at === -1) return [];
  const lines = note.slice(at + heading.length + 2).split('\n');
  const end = lines.findIndex((line) => !line.startsWith('- '));
  return lines.slice(0, end === -1 ? undefined : end).map((line) => line.slice(2))
    .filter((line) => line !== '(none)');
}

/** The earlier summary's files, each replaced by what this part of the conversation says of it. */
function withEarlier(earlier: string[], now: string[]): string[] {
  const file = (line: string) => line.slice(0, line.indexOf(': '));
  const named = new Set(now.map(file));
  return [...earlier.filter((line) => !named.has(file(line))), ...now];
}

/** Each file read, searched or changed, what happened to it, and what about it matters. */
function filesOf(calls: Call[], facts?: Facts): string[] {
  const files = new Map<string, Set<string>>();
  for (const call of calls) {
    const kind = callKind(call);
    const file = fileOf(call);
    if (!file || file === '.' || !['read', 'search', 'edit'].includes(kind)) continue;
    const done = { read: 'read', search: 'searched', edit: 'changed' }[kind as 'read'];
    const failed = call.result && !call.result.usable ? ' (interrupted)' : '';
    files.set(file, (files.get(file) ?? new Set()).add(`${done}${failed}`));
  }
  const matters = new Map<string, string>();
  const { failing, fn, module, spec, change, edited } = facts ?? {};
  if (failing) {
    matters.set(failing.file, `the failing test, “${failing.name}”, line ${failing.line}`);
  }
  if (fn && module) matters.set(module, `where ${fn}, the function under test, comes from`);
  if (spec) matters.set(spec.file, `states the rule the test checks, at line ${spec.line}`);
  const line = edited ?? change;
  if (line) matters.set(line.file, `line ${line.line} is the one to change`);
  return [...files].map(([file, what]) => {
    const why = matters.get(file);
    return `${file}: ${[...what].join(', ')}${why ? `; ${why}` : ''}`;
  });
}

/** The task and whether it is finished; the step that comes next; and what it knew. */
function whereItStands(entries: Entry[], calls: Call[]): [string[], string, Facts?] {
  const current = currentTask(entries);
  if (current.kind === 'task') {
    const { task } = current;
    const facts = task.kind === 'fix' ? readFacts(task, { system: '' }) : undefined;
    if (task.done) return [[`Done: ${task.prompt}`], 'wait for the next request', facts];
    if (!facts) return [[`Not finished: ${task.prompt}`], 'go on searching, then report'];
    const tools = new Set(['bash', ...calls.map((c) => c.name)]);
    return [[`Not finished: ${task.prompt}`], nextStep(facts, tools).what, facts];
  }
  if (current.kind === 'other' && current.prompt) {
    const answered = entries.at(-1)?.kind === 'note';
    const state = `The last request, “${head(current.prompt, 100)}”, ` +
      (answered ? 'was answered.' : 'is under way: its tool results are in.');
    return [[state], answered ? 'wait for the next request' : 'answer it from its results'];
  }
  return [['Nothing is under way.'], 'wait for the next request'];
}

const STOP = new Set(['keep', 'with', 'that', 'this', 'what', 'from', 'about', 'particular']);
// The test runner's own lines (TAP: a subtest's heading, its result, its YAML block, the counts):
// what they say is in the notes' sentences ("The failing test is …"), in words a summary can use.
const RUNNER = new RegExp(
  '^(?:# (?:Subtest|tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\\b|' +
    '(?:not )?ok \\d|1\\.\\.\\d|---$|\\.\\.\\.$|' +
    "(?:duration_ms|location|failureType|operator): |type: '(?:test|suite)')",
);

/** The focus, said, and the lines of the conversation about it (up to 12). */
function keptForFocus(who: string, focus: string, entries: Entry[]): string[] {
  // Its first 20 words: each is looked for in every line of the conversation.
  const found = focus.toLowerCase().match(/[\p{L}\d_.]{3,}/gu) ?? [];
  const words = found.filter((w) => !STOP.has(w)).slice(0, 20);
  const lines = entries.flatMap((e) => {
    if (e.kind === 'note') {
      const facts = factSentences(e.text);
      return facts.length ? facts : e.text.split('\n').filter((l) => !l.startsWith('(offline'));
    }
    if (e.kind === 'prompt') return [e.text];
    return e.kind === 'call' && e.call.result?.usable ? e.call.result.text.split('\n') : [];
  });
  const about = [...new Set(lines.map((l) => l.trim().replace(/^- /, '')))]
    .filter((l) => l && !RUNNER.test(l) && words.some((w) => l.toLowerCase().includes(w)))
    .slice(0, 12)
    .map((l) => `  - ${head(l, 200)}`);
  return [`- Kept in particular, as the ${who} asked: ${focus}`, ...about];
}
