/**
 * Checks for the s03 exercises. Run them with: npm run check s03
 */
import { reply, text, toolUse, type Reply } from '../../shared/fake-anthropic.ts';
import { need, type ExerciseCheck } from '../../tests/helpers/exercises.ts';
import { runChapter } from '../../tests/helpers/run-chapter.ts';

/**
 * The parent delegates once per input, in one reply (each child is told its own task);
 * returns each sub-agent's first request body, and the parent's first.
 */
async function childRequests(codePath: string, inputs: Record<string, unknown>[]) {
  const tasks = inputs.map((_, i) => `Task ${i + 1}: list the TypeScript files.`);
  const delegate = () => inputs.map((input, i) => toolUse('agent', { task: tasks[i], ...input }));
  const respond = (body: any): Reply => {
    if (tasks.includes(body.messages[0].content)) return reply(text('src/a.ts'));
    return body.messages.length === 1 ? reply(...delegate()) : reply(text('done'));
  };
  const run = await runChapter('s03', { codePath, args: ['-p', 'go'], respond });
  need(
    run.code === 0,
    `The chapter should still exit 0 (it exited ${run.code}). stderr:\n${run.stderr}`,
  );
  const first = (task: string) => run.requests.find((r) => r.body.messages[0].content === task);
  const children = tasks.map((task) => first(task)?.body);
  need(
    children.every(Boolean),
    'No sub-agent request was seen: the agent tool should still start a sub-agent.',
  );
  return { children, parent: run.requests[0].body };
}

const names = (body: any) => (body.tools as { name: string }[]).map((t) => t.name).sort();
const agentTool = (body: any) => (body.tools as any[]).find((t) => t.name === 'agent');

export const checks: ExerciseCheck[] = [
  {
    id: '01-read-only-explorer',
    title: '1. A read-only sub-agent: agent({ task, readonly: true })',
    async run(codePath) {
      const inputs = [{ readonly: true }, {}];
      const { children: [child, normal], parent } = await childRequests(codePath, inputs);
      need(
        agentTool(parent)?.input_schema?.properties?.readonly?.type === 'boolean',
        'Add a boolean "readonly" property to the agent tool’s input_schema (AGENT_TOOL in ' +
          'subagent.ts), so the model knows it exists.',
      );
      need(
        JSON.stringify(names(child)) === JSON.stringify(['glob', 'grep', 'read_file']),
        'With readonly: true the sub-agent should be offered only read_file, glob and grep ' +
          `(the child's tools are chosen in runSubagent); it got: ${names(child).join(', ')}`,
      );
      need(
        names(normal).includes('edit_file'),
        'Without readonly, the sub-agent should keep every tool but agent.',
      );
    },
  },
  {
    id: '02-child-model',
    title: '2. Let the parent pick the sub-agent’s model: agent({ task, model })',
    async run(codePath) {
      const inputs = [{ model: 'claude-haiku-5-5' }];
      const { children: [child], parent } = await childRequests(codePath, inputs);
      need(
        child.model === 'claude-haiku-5-5',
        "The sub-agent's requests should use the model the parent named; " +
          `it used "${child.model}". The request's model is set in agentLoop (code.ts).`,
      );
      need(parent.model !== 'claude-haiku-5-5', 'The parent keeps its own model.');
      need(
        agentTool(parent)?.input_schema?.properties?.model,
        'Add a "model" property to the agent tool’s input_schema (AGENT_TOOL in subagent.ts).',
      );
    },
  },
];
