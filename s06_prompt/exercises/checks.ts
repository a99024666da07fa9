/**
 * Checks for the s06 exercises. Run them with: npm run check s06
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { reply, text, toolUse } from '../../shared/fake-anthropic.ts';
import { need, type ExerciseCheck } from '../../tests/helpers/exercises.ts';
import { runChapter, runRepl } from '../../tests/helpers/run-chapter.ts';

const breakpoints = (body: any) =>
  (JSON.stringify([body.tools, body.system, body.messages]).match(/"cache_control"/g) ?? []).length;
const systemText = (body: any) =>
  typeof body.system === 'string' ? body.system : (body.system as { text: string }[]).map((b) => b.text).join('\n');

export const checks: ExerciseCheck[] = [
  {
    id: '01-memory',
    title: '1. /memory <text>: a line for your own instruction file, in every later request',
    async run(codePath) {
      const run = await runRepl('s06', ['/memory Always answer in haiku.', 'hello', 'exit'], {
        codePath,
        replies: [reply(text('Hi.'))],
      });
      need(run.code === 0, `The REPL should leave on "exit" with code 0 (it exited ${run.code}). Output:\n${run.stdout}`);
      const file = join(run.home, '.learn-agent-harness', 'AGENTS.md');
      need(existsSync(file), `/memory should append to your own instruction file, ${file}; it does not exist.`);
      need(readFileSync(file, 'utf8').includes('Always answer in haiku.'), `${file} should hold the line /memory was given.`);
      need(run.requests.length === 1, '/memory is a command for the REPL: only "hello" should reach the model.');
      need(
        systemText(run.requests[0].body).includes('Always answer in haiku.'),
        'The next request’s system prompt should include the new line: the prompt is rebuilt for every request.',
      );
    },
  },
  {
    id: '02-no-cache',
    title: '2. --no-cache: no breakpoints at all, to compare what a session costs',
    async run(codePath) {
      const replies = () => [reply(toolUse('bash', { command: 'echo hi' })), reply(text('Done.'))];
      const plain = await runChapter('s06', { codePath, args: ['--no-cache', '-p', 'go'], replies: replies() });
      need(plain.code === 0, `--no-cache -p … should run and exit 0 (it exited ${plain.code}). stderr:\n${plain.stderr}`);
      const marked = plain.requests.map((r) => breakpoints(r.body));
      need(marked.every((n) => n === 0), `With --no-cache no request should carry a cache_control; they carried ${marked.join(', ')}.`);
      const cached = await runChapter('s06', { codePath, args: ['-p', 'go'], replies: replies() });
      need(cached.requests.every((r) => breakpoints(r.body) === 2), 'Without the flag, the two breakpoints stay.');
    },
  },
];
