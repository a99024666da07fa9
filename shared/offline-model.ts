/**
 * The offline demo model: what a chapter talks to when no API key is set.
 *
 * It is NOT an AI. It is the strict fake API (fake-anthropic.ts) answering with a script, so a
 * reader without an account can still watch every chapter's mechanism work: the same SDK calls,
 * the same streaming, the same validation a real request gets. The script plays a few tasks the
 * way a model works, one step per reply, each decided from the request alone (the tools it offers,
 * the system prompt, the conversation so far): it keeps no state of its own.
 *
 *   fix the failing test      run the tests, read the failing test, find the line that is wrong,
 *                             edit it, run the tests again, answer (offline/fix-the-test.ts)
 *   continue                  go on with the latest task left unfinished (offline/tasks.ts)
 *   find where <name> is …    search, read, report the code: s03's sub-agent (offline/find.ts)
 *   a summary request         s05's compaction: a summary made from the conversation
 *                             (offline/summary.ts)
 *   run, read, list, …        a small command language, one tool call per command
 *                             (offline/commands.ts)
 *
 * Anything else gets an answer that says what it can do. Try the tasks in the sample project:
 * `npm run demo s02` copies demo/ to a scratch folder and runs the chapter there.
 */
import { randomBytes } from 'node:crypto';
import { startFakeAnthropic, type MessageReply, type Reply } from './fake-anthropic.ts';
import { describeResults, notUnderstood, runCommands } from './offline/commands.ts';
import { whatICanDo } from './offline/commands.ts';
import { OFFLINE_COMMANDS, usable } from './offline/commands.ts';
import { blocks, readRequest, SUMMARY_HEAD } from './offline/conversation.ts';
import { findDefinition } from './offline/find.ts';
import { fixTheTest } from './offline/fix-the-test.ts';
import { clip, say, showSafely } from './offline/reply.ts';
import { summarise } from './offline/summary.ts';
import { currentTask, DEMO_TASKS, isCommand, MAX_PROMPT, readFixPrompt } from './offline/tasks.ts';

export { OFFLINE_COMMANDS };

// The chapter that prints the banner, when its folder is in the program's path (s02_tools/…).
const running = () => process.argv[1]?.match(/\b(s\d\d)_\w+[\\/]code\.ts$/)?.[1];

/**
 * The banner a chapter prints when it runs offline: the tasks, then the commands it can do.
 * `continue` only from s04 on: before, Ctrl+C ends the program and the conversation with it.
 */
export function offlineBanner(tools: { name: string }[], chapter = running()): string {
  const commands = usable(new Set(tools.map((t) => t.name)));
  // A chapter it cannot name (a bundle of one, say) is offered everything, as before.
  const keeps = chapter === undefined || chapter >= 's04';
  const tasks = DEMO_TASKS.filter(([task]) => keeps || task !== 'continue');
  return [
    '┌─ offline demo ─────────────────────────────────────────────────────────',
    '│ No ANTHROPIC_API_KEY is set, so this runs against a scripted offline',
    '│ demo model on 127.0.0.1. It is not an AI: it plays a few tasks, best in',
    `│ the sample project (npm run demo ${chapter ?? '<chapter>'}), and knows a few commands.`,
    ...tasks.map(([task, what]) => `│  ▸ ${task.padEnd(29)} ${what}`),
    ...commands.map(([cmd, what]) => `│   ${cmd.padEnd(30)} ${what}`),
    '│   join two with "then":  run ls then read package.json',
    '│ For a real model: cp .env.example .env and set ANTHROPIC_API_KEY. A',
    '│ local one (not tried here), e.g. Ollama: MODEL_ID=<a model with tools>',
    '│ ANTHROPIC_BASE_URL=http://localhost:11434 ANTHROPIC_AUTH_TOKEN=ollama',
    '└────────────────────────────────────────────────────────────────────────',
  ].join('\n');
}

export interface OfflineModel {
  url: string;
  apiKey: string;
  /** The banner for a chapter with these tools. */
  banner(tools: { name: string }[]): string;
  close(): Promise<void>;
}

/**
 * Start the offline model on 127.0.0.1. It does not keep the process alive on its own. Every
 * local user can reach its port, so it answers only a key made for this process: a stranger's
 * request gets the API's 401 and never reaches the script.
 */
export async function startOfflineModel(): Promise<OfflineModel> {
  const apiKey = `offline-${randomBytes(32).toString('hex')}`;
  const fake = await startFakeAnthropic({ respond: offlineRespond, unref: true, apiKey });
  return { url: fake.url, apiKey, banner: offlineBanner, close: fake.close };
}

/**
 * One reply, decided from the request alone. What it shows, it shows safely: the tool output,
 * file names and prompts it quotes have their control characters written out (reply.ts).
 */
export function offlineRespond(body: any): Reply {
  return showSafely(decide(body));
}

function decide(body: any): MessageReply {
  const request = readRequest(body);
  const { tools, lastText } = request;
  // s05's summary request: no tools, the conversation as text, and the ask.
  if (tools.size === 0 && /summari[sz]e/i.test(lastText)) return say(summarise(lastText));

  const current = currentTask(request.entries);
  if (current.kind === 'task') {
    const { task } = current;
    return task.kind === 'fix' ? fixTheTest(task, request) : findDefinition(task, request);
  }
  if (current.kind === 'nothing to continue') {
    // How the last task ended, in its own words: "done" would be wrong for one it declined.
    const last = current.last;
    const ended = clip(last?.answer?.split('\n')[0] ?? '', 120);
    const why = last ? `the last task, “${last.prompt}”, ended with my answer: “${ended}”`
      : 'no task was started yet';
    return say(`There is nothing to continue: ${why}.\n${whatICanDo(tools)}`);
  }

  // The command language. A message can hold tool results and your new text together (s04
  // answers a call a crash left open in the message that carries your next prompt): the text
  // is what it answers, then.
  if (lastText.startsWith(SUMMARY_HEAD)) {
    return say(`I have a summary of the earlier conversation now (${lastText.length} characters).`);
  }
  if (lastText.length > MAX_PROMPT) {
    const size = `That prompt is ${lastText.length.toLocaleString('en')} characters long`;
    const limit = `a task or a command is at most ${MAX_PROMPT.toLocaleString('en')}`;
    return say(`${size}, and ${limit} here: put the text in a file instead.`);
  }
  if (readFixPrompt(lastText) === 'do not fix') {
    const not = 'You asked me not to fix them, so I did not start “fix the failing test” (it ' +
      'edits the code): it is the one task about tests I can play. To see which tests fail, ' +
      'run them: run node --test';
    return say(`${not}\n${whatICanDo(tools)}`);
  }
  if (lastText && !isCommand(lastText)) return say(notUnderstood(lastText, tools));
  if (lastText) return runCommands(lastText, tools, body);
  const results = blocks(body.messages.at(-1).content).filter((b) => b.type === 'tool_result');
  return say(describeResults(results, body.messages));
}
