/**
 * The task "find where <name> is defined": search for its definition, read the code around it,
 * follow what its conditions call and the constants they compare with, and report the file, the
 * lines and the code. s03's main agent hands its exploration to a sub-agent in these words, and
 * the sub-agent, whose conversation starts with them, plays this task; a reader can type it too.
 */
import type { MessageReply } from '../fake-anthropic.ts';
import type { Request } from './conversation.ts';
import { learn, lookUp, readLines } from './looking.ts';
import { step, type ToolCall } from './reply.ts';
import { explain, newKnowledge, type Explained } from './source.ts';
import { readFindPrompt, type Task } from './tasks.ts';

export function findDefinition(task: Task, request: Request): MessageReply {
  const { name, hint } = readFindPrompt(task.prompt)!;
  const seen = newKnowledge();
  for (const entry of task.entries) {
    const { kind } = entry;
    if (kind === 'call' && entry.call.result?.usable) learn(entry.call, seen, request.workdir);
  }
  const explained = explain(seen, name, hint);
  if ('notFound' in explained) {
    const where = hint ? ` in ${hint}` : '';
    const answer = `I could not find where ${name} is defined${where}.`;
    return step(`No definition of ${name}${where}.`, answer);
  }
  if ('done' in explained) {
    const thinking = `I have ${name}, what its conditions call and the constants they compare ` +
      'with: the file, the lines and the code, as asked. Time to report.';
    return step(thinking, report(explained.done));
  }
  const { need } = explained;
  const { tools } = request;
  let call: ToolCall;
  let thinking: string;
  if (need.kind === 'definition') {
    const first = need.name === name;
    thinking = first
      ? `The task: find where ${name} is defined${hint ? `; it should be in ${hint}` : ''}. ` +
        'I will search for its definition first.'
      : `${name}'s condition calls ${need.name}, which is not in what I have read; I will search ` +
        `${need.where ?? 'the project'} for it.`;
    call = lookUp(tools, need, seen);
  } else if (need.kind === 'lines') {
    thinking = `The search found ${name} in ${need.file}. I'll read the code there, with what ` +
      'is around it: the helpers and constants it uses are often just above.';
    call = tools.has('read_file') ? lookUp(tools, need, seen) : readLines(tools, need.file);
  } else {
    thinking = `A comparison in it uses ${need.name}, whose value I have not seen; I will ` +
      `look it up in ${need.where}.`;
    call = lookUp(tools, need, seen);
  }
  return step(thinking, '', call);
}

/** The report: where, what it calls and compares, then the code, numbered as read_file shows it. */
function report(found: Explained): string {
  const { name, file, line, bodies, comparisons, constants, lines } = found;
  const code = bodies.flatMap((b) => [...lines.keys()].filter((n) => n >= b.from && n <= b.to));
  const words = new Set(code.flatMap((n) => lines.get(n)?.match(/[\w$]+/g) ?? []));
  const used = [...constants].filter(([constant, c]) => words.has(constant) && c.file === file);
  const sentences = [`${name} is defined in ${file} at line ${line}.`];
  for (const b of bodies.slice(1)) {
    sentences.push(`Its condition calls ${b.name} (line ${b.from}).`);
  }
  for (const c of comparisons) {
    if (c.values.some((v) => v !== undefined)) sentences.push(`Line ${c.line}: \`${c.written}\`.`);
  }
  for (const [constant, c] of used) sentences.push(`${constant} is ${c.value} (line ${c.line}).`);
  const shown = [...new Set([...used.map(([, c]) => c.line), ...code])].sort((a, b) => a - b);
  const numbered = shown.map((n, i) => {
    const gap = i > 0 && n > shown[i - 1] + 1 ? '     …\n' : '';
    return `${gap}${String(n).padStart(6)}\t${lines.get(n)}`;
  });
  return `${sentences.join(' ')}\n\nIn ${file}:\n${numbered.join('\n')}`;
}
