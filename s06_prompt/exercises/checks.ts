/**
 * Checks for the s06 exercises. Run them with: npm run check s06
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { reply, text, toolUse } from '../../shared/fake-anthropic.ts';
import { need, type ExerciseCheck } from '../../tests/helpers/exercises.ts';
import { runChapter, runRepl } from '../../tests/helpers/run-chapter.ts';

const breakpoints = (body: any) => {
  const sent = JSON.stringify([body.tools, body.system, body.messages]);
  return (sent.match(/"cache_control"/g) ?? []).length;
};
const systemText = (body: any) =>
  typeof body.system === 'string'
    ? body.system
    : (body.system as { text: string }[]).map((b) => b.text).join('\n');
/** The permission bits of a file or folder, as `ls -l` counts them: '600', '700'… */
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

export const checks: ExerciseCheck[] = [
  {
    id: '01-memory',
    title: '1. /memory <text>: a line for your own instruction file, in every later request',
    async run(codePath) {
      const run = await runRepl('s06', ['/memory Always answer in haiku.', 'hello', 'exit'], {
        codePath,
        replies: [reply(text('Hi.'))],
      });
      need(
        run.code === 0,
        `The REPL should leave on "exit" with code 0 (it exited ${run.code}). ` +
          `Output:\n${run.stdout}`,
      );
      const file = join(run.home, '.learn-agent-harness', 'AGENTS.md');
      need(
        existsSync(file),
        `/memory should append to your own instruction file, ${file} (USER_INSTRUCTIONS in ` +
          'instructions.ts); it does not exist.',
      );
      need(
        readFileSync(file, 'utf8').includes('Always answer in haiku.'),
        `${file} should hold the line /memory was given.`,
      );
      need(
        mode(file) === '600' && mode(dirname(file)) === '700',
        `Your instructions are for your eyes only: the file should be created with mode 0600 ` +
          `(it is ${mode(file)}), its folder with 0700 (it is ${mode(dirname(file))}).`,
      );
      need(
        run.requests.length === 1,
        '/memory is a command for the REPL (next to /prompt in main, code.ts): only "hello" ' +
          'should reach the model.',
      );
      need(
        systemText(run.requests[0].body).includes('Always answer in haiku.'),
        'The next request’s system prompt should include the new line: the prompt is rebuilt ' +
          'for every request.',
      );
    },
  },
  {
    id: '02-no-cache',
    title: '2. --no-cache: no breakpoints at all, to compare what a session costs',
    async run(codePath) {
      const replies = () => [reply(toolUse('bash', { command: 'echo hi' })), reply(text('Done.'))];
      const args = ['--no-cache', '-p', 'go'];
      const plain = await runChapter('s06', { codePath, args, replies: replies() });
      need(
        plain.code === 0,
        `--no-cache -p … should run and exit 0 (it exited ${plain.code}). ` +
          `stderr:\n${plain.stderr}`,
      );
      const marked = plain.requests.map((r) => breakpoints(r.body));
      need(
        marked.every((n) => n === 0),
        'With --no-cache no request should carry a cache_control (systemPrompt in prompt.ts, ' +
          `withBreakpoint in cache.ts); they carried ${marked.join(', ')}.`,
      );

      // The main agent hands a task to a sub-agent, which runs a command and reports.
      const task = 'Run echo hi and report.';
      const delegated = await runChapter('s06', {
        codePath,
        args,
        replies: [
          reply(toolUse('agent', { task }, 'toolu_agent')),
          reply(toolUse('bash', { command: 'echo hi' })),
          reply(text('It printed hi.')),
          reply(text('Done.')),
        ],
      });
      // A sub-agent's requests are those without the agent tool.
      const isChild = (body: any) => !body.tools.some((tool: any) => tool.name === 'agent');
      const byChild = delegated.requests.filter((r) => isChild(r.body));
      need(
        delegated.code === 0 && byChild.length === 2,
        `--no-cache -p … with a sub-agent should run and exit 0 (it exited ${delegated.code}), ` +
          `the sub-agent sending 2 requests (it sent ${byChild.length}). ` +
          `stderr:\n${delegated.stderr}`,
      );
      need(
        byChild.every((r) => breakpoints(r.body) === 0),
        'With --no-cache a sub-agent’s requests should carry no cache_control either: ' +
          'runSubagent (subagent.ts) makes its agent from the parent.',
      );

      const cached = await runChapter('s06', { codePath, args: ['-p', 'go'], replies: replies() });
      need(
        cached.requests.every((r) => breakpoints(r.body) === 2),
        'Without the flag, the two breakpoints stay.',
      );
    },
  },
];
