/**
 * s04's stages: the session log, in the order a builder takes it. Ctrl+C comes second: it is
 * checked in the REPL that makes the first session, and the resume after it in stage 3.
 *
 * What the stages rely on, beyond -p and the REPL (the contract of a session log):
 *  - a session is one file named `<id>.jsonl`, anywhere under HOME (the workspace is shared by
 *    the runs; HOME is copied to try a damaged log on the side); `-r <id>` (that whole name
 *    without .jsonl) resumes it, `-c` resumes the session used last;
 *  - each message of the conversation is one line of that file, a JSON object that holds the
 *    message as it is sent to the API ({ role, content }: at its top, or nested at any depth);
 *    other lines (a header, a note) may come between, and are skipped here;
 *  - the file is only appended to: a line once written stays as it is;
 *  - a second agent on an open session exits non-zero before it sends anything.
 * Nothing else: not the folder, the id's form, the header, the stderr wording or the exit code of
 * a refusal. The scripted bash commands touch files in the workspace (`build-started`, `holding`),
 * for the grader to wait on, and one copies the log as the call runs (`log-at-call.txt`).
 *
 * Five runs share one workspace and HOME: the REPL (stages 1, 2), then a new session, -c, and -r,
 * which a second agent tries to join meanwhile (3, 4). A sixth resumes a copy of the REPL's HOME,
 * cut as a crash leaves a log (5).
 */
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { basename, join, relative } from 'node:path';
import { reply, text, toolUse } from '../../shared/fake-anthropic.ts';
import type { RunResult } from '../helpers/run-chapter.ts';
import { accepted, brief, ended, ending, miss, need, type Agent, type Stage } from './stage.ts';

const NOTE = 'Take a note.';
const BUILD = 'Build it.';
const THERE = 'Are you there?';
const OTHER = 'Another topic.';
const THEN = 'And then?';
const BACK = 'Back to the note.';
const WHAT = 'What happened?';

// The scripted calls: ids the stages look for, and the files they wait on.
const NOTE_ID = 'toolu_grade_note';
const BUILD_ID = 'toolu_grade_build';
// No "> " in a command: the REPL's prompt is a line that ends so, and a command is shown.
const COPY_LOG = `find "$HOME" -name '*.jsonl' -type f -exec cat {} + >log-at-call.txt`;
const HOLD = 'touch holding; for i in $(seq 300); do [ -e released ] && break; sleep 0.05; done';

// ── Reading a log, by the contract alone ────────────────────────────────────────────────────

/** A message at the top of a parsed line or anywhere in it: { role, content } as the API takes. */
function messageIn(value: unknown): any {
  const queue: unknown[] = [value];
  while (queue.length > 0) {
    const item = queue.shift();
    if (typeof item !== 'object' || item === null) continue;
    const { role, content } = item as any;
    const isContent = typeof content === 'string' || Array.isArray(content);
    if ((role === 'user' || role === 'assistant') && isContent) return item;
    queue.push(...Object.values(item));
  }
  return undefined;
}

/** The messages of a log's text, a line each; lines that do not parse or hold none are skipped. */
function messagesOf(textOfLog: string): any[] {
  return textOfLog.split('\n').flatMap((line) => {
    try {
      const message = messageIn(JSON.parse(line));
      return message ? [message] : [];
    } catch {
      return [];
    }
  });
}

/** Every regular file *.jsonl under a folder (links are not followed). */
function jsonlFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .map((name) => join(folder, name))
    .filter((file) => file.endsWith('.jsonl') && lstatSync(file).isFile());
}

/** The session under `home` whose first message is the prompt `first`. */
function sessionOf(home: string, first: string): { file: string; id: string } | undefined {
  const file = jsonlFiles(home).find((f) => said(messagesOf(readFileSync(f, 'utf8'))[0]) === first);
  return file ? { file, id: basename(file, '.jsonl') } : undefined;
}

/** What a HOME holds, for a Miss: "no *.jsonl file" or the files and their first messages. */
function found(home: string): string {
  const files = jsonlFiles(home);
  if (files.length === 0) return 'left no *.jsonl file under HOME';
  const first = (f: string) => said(messagesOf(readFileSync(f, 'utf8'))[0]) ?? '(no message)';
  const each = files.map((f) => `${relative(home, f)} (first: ${brief(first(f), 40)})`);
  return `left ${each.join(', ')}`;
}

/** The text of a user message (a string, or its text blocks), or undefined. */
function said(message: any): string | undefined {
  if (!message) return undefined;
  if (typeof message.content === 'string') return message.content;
  const texts = (message.content as any[]).filter((b) => b?.type === 'text').map((b) => b.text);
  return texts.length ? texts.join(' ') : undefined;
}

/**
 * A conversation in short, one string a turn (messages of one role in a row are one turn, as the
 * API reads them), thinking left out: `user: text "Take a note."`, `assistant: tool_use(toolu_1)`.
 */
function turns(messages: any[]): string[] {
  const out: { role: string; parts: string[] }[] = [];
  for (const m of messages) {
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    const parts = (content as any[]).flatMap((b) => {
      if (b.type === 'text') return [`text ${JSON.stringify(b.text)}`];
      if (b.type === 'tool_use') return [`tool_use(${b.id})`];
      if (b.type === 'tool_result') return [`tool_result(${b.tool_use_id})`];
      return []; // thinking: it goes with its turn, and the stages do not look at it
    });
    if (out.at(-1)?.role === m.role) out.at(-1)!.parts.push(...parts);
    else out.push({ role: m.role, parts });
  }
  return out.map((t) => `${t.role}: ${t.parts.join(', ')}`);
}

/** Turns in one line, cut to fit a Miss. */
function shortTurns(list: string[]): string {
  const line = list.join(' · ');
  return line.length > 190 ? `${line.slice(0, 189)}…` : line;
}

/** The first request whose last message says `words`, and whether the API took it. */
function requestSaying(run: RunResult, words: string) {
  return run.requests.find((r) => JSON.stringify(r.body.messages?.at(-1) ?? null).includes(words));
}

// ── The runs, shared by the stages ──────────────────────────────────────────────────────────

/** What the model says to the REPL's prompts, by the last message of each request. */
function chatReplies(body: any) {
  const last = JSON.stringify(body.messages.at(-1));
  if (last.includes(NOTE_ID)) return reply(text('Noted.'));
  if (last.includes(THERE)) return reply(text('Still here.'));
  if (last.includes(BUILD)) {
    return reply(toolUse('bash', { command: 'touch build-started; sleep 30' }, BUILD_ID));
  }
  if (last.includes(NOTE)) return reply(toolUse('bash', { command: COPY_LOG }, NOTE_ID));
  return reply(text('Hm.'));
}

/**
 * The REPL that makes the first session: a note (a bash call that copies the log), a build that
 * Ctrl+C cancels while its command runs, a question, exit. Then a copy of its HOME, kept as it is
 * (stage 5 cuts a copy of it), before the runs that follow change the first.
 */
const chat = (agent: Agent) =>
  agent.once('chat', async () => {
    const inputs = [NOTE, BUILD, { file: 'build-started', keys: '\x03' }, THERE, 'exit'];
    const run = await agent.repl('chat', inputs, { respond: chatReplies });
    const spare = mkdtempSync(join(run.tempDir, 'home-'));
    cpSync(run.home, spare, { recursive: true, preserveTimestamps: true });
    return { run, spare };
  });

const folders = (run: RunResult) => ({ workspace: run.workspace, home: run.home });

/** A second session, newer than the first; then -c, which must take it. */
const continued = (agent: Agent) =>
  agent.once('continue', async () => {
    const { run } = await chat(agent);
    const other = await agent.run('other', {
      folders: folders(run),
      args: ['-p', OTHER],
      replies: [reply(text('Another answer.'))],
    });
    const next = await agent.run('continue', {
      folders: folders(run),
      args: ['-c', '-p', THEN],
      replies: [reply(text('Then this.'))],
    });
    return { other, next };
  });

/**
 * -r <the first session>: its command waits (holding) while a second agent tries -c on the same
 * session (now the latest); then the first is let go (released) and answers.
 */
const writers = (agent: Agent) =>
  agent.once('writers', async () => {
    const { run } = await chat(agent);
    await continued(agent);
    const first = sessionOf(run.home, NOTE);
    if (!first) return { chat: run };
    const holder = agent.run('resume', {
      folders: folders(run),
      args: ['-r', first.id, '-p', BACK],
      replies: [
        reply(toolUse('bash', { command: HOLD }, 'toolu_grade_hold')),
        reply(text('Back.')),
      ],
    });
    let over = false;
    const done = () => (over = true);
    holder.then(done, done);
    while (!over && !existsSync(join(run.workspace, 'holding'))) await sleep(50);
    let second: RunResult | undefined;
    let before = '';
    let after = '';
    if (!over) {
      before = readFileSync(first.file, 'utf8');
      second = await agent.run('second', {
        folders: folders(run),
        args: ['-c', '-p', 'Me too.'],
        replies: [reply(text('Me too.'))],
      });
      after = readFileSync(first.file, 'utf8');
    }
    writeFileSync(join(run.workspace, 'released'), '');
    return { chat: run, first, holder: await holder, second, before, after };
  });

/** A copy of the REPL's HOME as it left it (the first session alone), to change on the side. */
export async function sparedHome(agent: Agent): Promise<{ run: RunResult; home: string }> {
  const { run, spare } = await chat(agent);
  const home = mkdtempSync(join(run.tempDir, 'home-'));
  cpSync(spare, home, { recursive: true, preserveTimestamps: true });
  return { run, home };
}

/**
 * A copy of that HOME, with the first session cut as a crash while the note's command ran leaves
 * it: every line up to the reply that made the call, then half of the next line. Then -c.
 */
const repaired = (agent: Agent) =>
  agent.once('repair', async () => {
    const { run, home: spare } = await sparedHome(agent);
    const session = sessionOf(spare, NOTE);
    if (!session) return { chat: run };
    const lines = readFileSync(session.file, 'utf8').split('\n');
    const call = lines.findIndex((line) => turns(messagesOf(line))[0] === NOTE_TURNS[1]);
    if (call < 0) return { chat: run };
    const next = lines[call + 1] || '{"role":"user","content":[{"type":"tool_result","tool_u';
    const before = `${lines.slice(0, call + 1).join('\n')}\n${next.slice(0, next.length >> 1)}`;
    writeFileSync(session.file, before);
    const resumed = await agent.run('repair', {
      folders: { workspace: run.workspace, home: spare },
      args: ['-c', '-p', WHAT],
      replies: [reply(text('The note was cut off.'))],
    });
    return { chat: run, resumed, file: session.file, before };
  });

// ── The stages ──────────────────────────────────────────────────────────────────────────────

const NOTE_TURNS = [
  `user: text ${JSON.stringify(NOTE)}`,
  `assistant: tool_use(${NOTE_ID})`,
  `user: tool_result(${NOTE_ID})`,
  'assistant: text "Noted."',
];

export const stages: Stage[] = [
  {
    name: 'every message is appended to the log as one JSON line, as soon as it is complete',
    hint:
      'When does a message go into the log: at the end of the turn, or the moment it is ' +
      'complete, before its tools run? And what keeps each one on a line of its own?',
    async check(agent) {
      const asked =
        `in the REPL: "${NOTE}"; the model calls bash (it copies the log), then says "Noted."`;
      const { run } = await chat(agent);
      accepted(agent, run, 2, asked, 'the tool result sent back in a second request');
      const session = sessionOf(run.home, NOTE);
      const where = `a file <id>.jsonl under HOME whose first message is "${NOTE}"`;
      if (!session) miss(asked, found(run.home), where);
      const copy = join(run.workspace, 'log-at-call.txt');
      const atCall = existsSync(copy) ? readFileSync(copy, 'utf8') : '';
      const early = turns(messagesOf(atCall));
      need(
        early.length >= 2 && early[1] === NOTE_TURNS[1],
        asked,
        `as the call ran, the log held: ${early.length ? shortTurns(early) : 'no message'}`,
        'the prompt and the reply that made the call, in the log before the call runs',
      );
      const logged = turns(messagesOf(readFileSync(session.file, 'utf8')).slice(0, 4));
      need(
        logged.join('\n') === NOTE_TURNS.join('\n'),
        asked,
        `logged ${shortTurns(logged)}`,
        'a line each: the prompt, the call, its result, "Noted." (each as the API took it)',
      );
      const lines = new Set(readFileSync(session.file, 'utf8').split('\n'));
      const rewritten = atCall
        .split('\n')
        .filter((line) => messagesOf(line).length > 0 && !lines.has(line));
      need(
        rewritten.length === 0,
        asked,
        `rewrote a line logged before: ${brief(rewritten[0] ?? '', 100)}`,
        'lines only ever appended, each left as it was written',
      );
    },
  },
  {
    name: 'Ctrl+C cancels the turn, and the conversation goes on',
    hint:
      'Ctrl+C sends SIGINT. What must it stop (the stream, the running command), and what must ' +
      'it leave (the program, the conversation, a result for every call)?',
    async check(agent) {
      const asked =
        `in the REPL: "${BUILD}"; the model runs bash (touch build-started; sleep 30); Ctrl+C ` +
        `once it started; then "${THERE}", then exit`;
      const expected = `the turn stopped; "${THERE}" sent after it, every call with its result`;
      const { run } = await chat(agent);
      const after = requestSaying(run, THERE);
      const how = `sent ${run.requests.length} requests, then ${ending(run, agent.boundMs)}`;
      if (!after) miss(asked, how, expected);
      accepted(agent, run, run.requests.indexOf(after) + 1, asked, expected);
      const sent = turns(after.body.messages);
      const build = sent.findIndex((t) => t.includes(`tool_use(${BUILD_ID})`));
      need(
        build > 0 && sent[build - 1].includes(JSON.stringify(BUILD)),
        asked,
        `sent ${shortTurns(sent.slice(-4))}`,
        `${expected}: "${BUILD}" and its call kept`,
      );
      ended(agent, run, asked, 'the REPL goes on after Ctrl+C, and exits 0 on "exit"');
    },
  },
  {
    name: '-c resumes the latest session, and -r <id> the one named',
    hint:
      'Which session did you use last, and how do you find the one an id names? What does the ' +
      'first request of a resumed run hold?',
    async check(agent) {
      const { other, next } = await continued(agent);
      const asked = `-c -p "${THEN}", after a new session -p "${OTHER}" (the latest)`;
      const latest = [
        `user: text "${OTHER}"`,
        'assistant: text "Another answer."',
        `user: text "${THEN}"`,
      ];
      ended(agent, other, `-p "${OTHER}" beside the first session`, 'the answer, exit 0');
      const sent = turns(accepted(agent, next, 1, asked, latest.join(' · ')).body.messages);
      const same = sent.join('\n') === latest.join('\n');
      need(same, asked, `sent ${shortTurns(sent)}`, latest.join(' · '));

      const w = await writers(agent);
      if (!w.first) miss('-r <id> of the first session', found(w.chat.home), 'its log, to resume');
      const askedR = `-r ${w.first.id} -p "${BACK}", after -c made another session the latest`;
      const { requests } = w.chat;
      const last = requests.at(-1)?.body.messages ?? [];
      const whole = turns([...last, { role: 'assistant', content: 'Still here.' }]);
      const want =
        `the REPL's conversation (${whole.length} turns, the one Ctrl+C stopped too), ` +
        `then "${BACK}"`;
      const resumed = turns(accepted(agent, w.holder, 1, askedR, want).body.messages);
      const back = resumed.at(-1) === `user: text "${BACK}"`;
      need(
        resumed.slice(0, -1).join('\n') === whole.join('\n') && back,
        askedR,
        `sent ${resumed.length} turns: ${shortTurns(resumed)}`,
        want,
      );
    },
  },
  {
    name: 'a second agent on an open session is refused',
    hint:
      'How does a second agent know that another process has the session open, and what if ' +
      'that process died without cleaning up?',
    async check(agent) {
      const w = await writers(agent);
      const asked =
        `while -r <id> -p "${BACK}" runs a command, a second agent starts: -c -p "Me too."`;
      const expected = 'the second exits non-zero at once: no request, the log untouched';
      if (!w.first) miss(asked, found(w.chat.home), 'a session to open twice');
      const first = `the first run ${ending(w.holder, agent.boundMs)} before its command ran`;
      if (!w.second) miss(asked, first, expected);
      const second = w.second;
      const refused = !second.timedOut && second.code !== 0;
      need(refused, asked, `the second ${ending(second, agent.boundMs)}`, expected);
      const sent = second.requests.length;
      need(sent === 0, asked, `the second sent ${sent} request(s)`, expected);
      need(w.after === w.before, asked, 'the second changed the session’s log', expected);
      ended(agent, w.holder, asked, 'the first run answers once its command ends, and exits 0');
    },
  },
  {
    name: 'a damaged or unanswered tail is repaired for sending, the log untouched',
    hint:
      'A crash can leave a call without its result, and half a line. What would the API refuse, ' +
      'and where do you mend it: in the log, or in what you send?',
    async check(agent) {
      const r = await repaired(agent);
      const asked =
        `the first session cut as a crash leaves it (the call to bash, no result, half a line); ` +
        `-c -p "${WHAT}"`;
      const expected = `the call answered (a tool_result saying it was cut off), then "${WHAT}"`;
      if (!r.resumed) miss(asked, found(r.chat.home), 'a session to cut');
      const sent = turns(accepted(agent, r.resumed, 1, asked, expected).body.messages);
      const answered = sent[2]?.startsWith(`user: tool_result(${NOTE_ID})`);
      const call = sent[0] === NOTE_TURNS[0] && sent[1] === NOTE_TURNS[1];
      need(
        call && answered && sent.at(-1)!.includes(WHAT),
        asked,
        `sent ${shortTurns(sent)}`,
        expected,
      );
      ended(agent, r.resumed, asked, 'the answer, exit 0');
      const now = readFileSync(r.file, 'utf8');
      const kept = now.startsWith(r.before);
      need(kept, asked, 'changed what the log held before the run', 'the log only appended to');
      const appended = messagesOf(now).map(said);
      need(
        appended.includes(WHAT),
        asked,
        `logged no whole line with "${WHAT}" (did it stick to the torn half line?)`,
        'the new messages on lines of their own, after the torn one',
      );
    },
  },
];

/** The runs above, for tests/grade-s04.test.ts to check what only the chapter does on them. */
export const scenarios = { chat, continued, writers, repaired };
export const words = { NOTE, BUILD, THERE, OTHER, THEN, BACK, WHAT, NOTE_ID, BUILD_ID };
