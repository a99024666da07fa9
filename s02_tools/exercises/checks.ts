/**
 * Checks for the s02 exercises. Run them with: npm run check s02
 */
import { reply, text, toolUse, type ReplyBlock } from '../../shared/fake-anthropic.ts';
import { need, type ExerciseCheck } from '../../tests/helpers/exercises.ts';
import { runChapter, toolResults, type RunOptions } from '../../tests/helpers/run-chapter.ts';

type Result = { content: string; is_error?: boolean };

/** Run one reply of tool calls; return the tool_results the chapter sent back. */
async function results(codePath: string, calls: ReplyBlock[], opts: RunOptions = {}) {
  const replies = [reply(...calls), reply(text('done'))];
  const run = await runChapter('s02', { codePath, args: ['-p', 'go'], replies, ...opts });
  need(
    run.code === 0 && run.requests.length === 2,
    `The chapter should run the tool calls and exit 0. stderr:\n${run.stderr}`,
  );
  const tools = run.requests[0].body.tools as { name: string }[];
  return { run, tools, results: toolResults(run.requests[1].body) as Result[] };
}

export const checks: ExerciseCheck[] = [
  {
    id: '01-list-dir',
    title: '1. Add a list_dir tool (folders end with "/")',
    async run(codePath) {
      const files = { 'a.txt': '', 'src/b.ts': '' };
      const call = toolUse('list_dir', { path: '.' });
      const { tools, results: [r] } = await results(codePath, [call], { files });
      need(
        tools.some((t) => t.name === 'list_dir'),
        'The request should offer a tool named "list_dir": add its schema to TOOLS in tools.ts.',
      );
      need(
        !r.is_error,
        `list_dir answered with an error: ${r.content}. ` +
          'Add a line for it to HANDLERS in tools.ts, naming the function that runs it.',
      );
      const lines = String(r.content).split('\n');
      need(
        lines.includes('a.txt') && lines.includes('src/'),
        `list_dir(".") should list "a.txt" and "src/", one per line; it returned:\n${r.content}`,
      );
    },
  },
  {
    id: '02-gate-force-push',
    title: '2. Make the gate refuse a force push',
    async run(codePath) {
      const cmds = ['git push --force origin main', 'git push -f', 'git push origin main'];
      const calls = cmds.map((command) => toolUse('bash', { command }));
      const { results: rs } = await results(codePath, calls);
      const where = 'Add a rule to DANGEROUS in bash.ts.';
      need(
        rs[0].is_error && /refused/.test(rs[0].content),
        `"git push --force origin main" should be refused by the gate. ${where}`,
      );
      need(rs[1].is_error && /refused/.test(rs[1].content), '"git push -f" should be refused too.');
      need(
        !/refused/.test(rs[2].content),
        'A plain "git push origin main" must not be refused (it may fail: there is no remote).',
      );
    },
  },
  {
    id: '03-protect-env',
    title: '3. Keep the file tools away from .env',
    async run(codePath) {
      const paths = ['.env', 'config/.env', 'env.ts'];
      const calls = paths.map((file_path) => toolUse('read_file', { file_path }));
      const files = {
        '.env': 'ANTHROPIC_API_KEY=sk-secret',
        'config/.env': 'TOKEN=abc',
        'env.ts': 'export {}',
      };
      const { results: rs } = await results(codePath, calls, { files });
      need(
        rs[0].is_error && !rs[0].content.includes('sk-secret'),
        'read_file(".env") should be refused: its secrets would be sent to the API. ' +
          'Every file tool passes its path through safePath (workspace.ts).',
      );
      need(rs[1].is_error, 'A .env in a subfolder should be refused too.');
      need(!rs[2].is_error, 'env.ts is an ordinary file: read_file must still read it.');
    },
  },
];
