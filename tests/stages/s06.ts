/**
 * s06's stages: the system prompt assembled from sections, rebuilt every turn, cached in two parts.
 * All five read one REPL session of two turns (one process): in a subfolder of a git repository
 * with three instruction files, the first turn edits the subfolder's CLAUDE.md with edit_file and
 * answers; the second turn only answers. Three requests in all.
 *
 * What the stages rely on, from the chapter's README as the contract (never its wording):
 * - the system prompt holds a guide naming every tool the request offers, and the environment:
 *   the working directory, the system (Linux), the Node.js version and the model (MODEL_ID);
 * - the instruction files are AGENTS.md and CLAUDE.md in every folder from the repository's root
 *   (the nearest folder with .git) down to the working directory, and the user's own
 *   ~/.learn-agent-harness/AGENTS.md first; each goes in whole or cut, under its path, most general
 *   first and nearest last, after the rest of the prompt; a file has 8,000 characters at most, all
 *   20,000, spent from the nearest file outwards; a cut is marked where it falls;
 * - the date (as YYYY-MM-DD) and git's branch and status are sent after the prompt, in the user's
 *   message, which later requests send unchanged; they are nowhere in the tools or the system;
 * - the system prompt is built again at each turn, and stays the same within a turn;
 * - a cache breakpoint on the last block of the system prompt and one on the last block of the
 *   last message; so the next request of a turn reads all of this one from the cache.
 * What the API receives is the measure: the system blocks, where cache_control is, and the
 * cache reads and writes the fake reports, as the real API would.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { join } from 'node:path';
import { reply, text, toolUse } from '../../shared/fake-anthropic.ts';
import { TEST_MODEL, type RunResult } from '../helpers/run-chapter.ts';
import { accepted, brief, ended, need, shape, type Agent, type Stage } from './stage.ts';

const FILE_BUDGET = 8_000;
const TOTAL_BUDGET = 20_000;
const BRANCH = 'grade-branch';
const STATUS = 'status-marker.txt'; // an untracked file: git status lists it

// Each file: a rule line, then a long run of one letter between a start and an end mark, so
// what was kept of it can be counted. The nearest (pkg/CLAUDE.md) fits; the root's is over a
// file's share; yours gets what the total leaves (20,000 − 7,000 − 8,000), so it is cut too.
const FILES = [
  { at: '../home/.learn-agent-harness/AGENTS.md', rule: 'USER-RULE', letter: 'u', length: 9_000 },
  { at: 'AGENTS.md', rule: 'ROOT-RULE', letter: 'r', length: 30_000 },
  { at: 'pkg/CLAUDE.md', rule: 'PKG-RULE: run the tests.', letter: 'p', length: 6_900 },
];
const contentOf = ({ rule, letter, length }: (typeof FILES)[number]) =>
  `${rule}\n${letter.toUpperCase()}-START ${letter.repeat(length)} ${letter.toUpperCase()}-END\n`;
const ABOVE = 'ABOVE-RULE'; // in a CLAUDE.md above the repository's root: not the project's

const FIRST = 'Change a rule.';
// The edit the model makes to pkg/CLAUDE.md in the first turn.
const [OLD, NEW] = ['run the tests', 'run NEW-CHECKS'];
const SECOND = 'And now?';

/** A git repository (no commit) with the instruction files, and a file for git status to list. */
function project(workspace: string) {
  spawnSync('git', ['init', '-q', '-b', BRANCH], { cwd: workspace });
  const files: Record<string, string> = { [STATUS]: 'x\n', '../CLAUDE.md': `${ABOVE}\n` };
  for (const file of FILES) files[file.at] = contentOf(file);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(workspace, name, '..'), { recursive: true });
    writeFileSync(join(workspace, name), content);
  }
}

/** The REPL in pkg/: turn 1 edits pkg/CLAUDE.md, then answers; turn 2 answers. */
const session = (agent: Agent) =>
  agent.repl('turns', [FIRST, SECOND, 'exit'], {
    cwd: 'pkg',
    setup: project,
    replies: [
      reply(toolUse('edit_file', { file_path: 'CLAUDE.md', old_string: OLD, new_string: NEW })),
      reply(text('Done.')),
      reply(text('Noted.')),
    ],
  });
const ASKED =
  `REPL in pkg/ of a git repository with instruction files: "${FIRST}" (the model edits ` +
  `pkg/CLAUDE.md), then "${SECOND}"`;

/** The system prompt's text, whether it was sent as a string or as text blocks. */
function systemText(body: any): string {
  if (typeof body.system === 'string') return body.system;
  if (!Array.isArray(body.system)) return '';
  return body.system.map((b: any) => b?.text ?? '').join('\n');
}

/** A request's part before the messages, as the API caches it: the tools, then the system. */
const front = (body: any) => `${JSON.stringify(body.tools ?? [])}\n${systemText(body)}`;

/** The dates the run may have seen: today's and yesterday's, as YYYY-MM-DD (a run at midnight). */
function dates(): string[] {
  const now = Date.now();
  return [now, now - 86_400_000].map((t) => new Date(t).toISOString().slice(0, 10));
}

/** A message as JSON with cache_control taken out: what it says, wherever a breakpoint falls. */
const unmarked = (message: unknown) =>
  JSON.stringify(message ?? null, (key, value) => (key === 'cache_control' ? undefined : value));

const breakpoints = (body: any) =>
  (JSON.stringify([body.tools, body.system, body.messages]).match(/"cache_control"/g) ?? []).length;

/** The last block of a message's content, or of the system prompt (none if it is a string). */
const lastBlock = (content: unknown): any => (Array.isArray(content) ? content.at(-1) : undefined);

/** How a file is named in a Miss: ~/.learn-agent-harness/AGENTS.md, AGENTS.md, pkg/CLAUDE.md. */
const named = (file: (typeof FILES)[number]) => file.at.replace('../home/', '~/');

/** The first request's body, as the API accepted it; if there is none, the stage says why. */
const firstBody = (agent: Agent, run: RunResult) =>
  accepted(agent, run, 1, ASKED, 'a first request, with the first prompt').body;

export const stages: Stage[] = [
  {
    name: 'the system prompt names every tool and says where it runs',
    hint:
      'Which facts stay the same all session (the folder, the system, the Node.js version, the ' +
      'model), and how can the prompt’s list of tools never drift from the tools sent?',
    async check(agent) {
      const run = await session(agent);
      const body = firstBody(agent, run);
      const system = systemText(body);
      const did = `sent the system prompt ${brief(system, 100)}`;
      const tools: string[] = (body.tools ?? []).map((tool: any) => tool.name);
      const unnamed = tools.filter((name) => !new RegExp(`\\b${name}\\b`).test(system));
      const every = 'a system prompt that names every tool the request offers';
      need(unnamed.length === 0, ASKED, `${did}, which never names ${unnamed.join(', ')}`, every);
      const facts: [string, boolean][] = [
        ['the working directory', system.includes(join(run.workspace, 'pkg'))],
        ['the system', new RegExp(`${os.type()}|${process.platform}`, 'i').test(system)],
        ['the Node.js version', system.includes(process.version)],
        [`the model (${TEST_MODEL})`, system.includes(TEST_MODEL)],
      ];
      const absent = facts.filter(([, there]) => !there).map(([fact]) => fact);
      const environment = 'the environment in it: the folder, the system, Node.js, the model';
      need(absent.length === 0, ASKED, `${did}, without ${absent.join(', ')}`, environment);
    },
  },
  {
    name: 'instruction files are found, framed under their paths, and kept within their budget',
    hint:
      'Which folders does the search visit, from where to where, and which file has the final ' +
      'word? When they are too long, which file stays whole, and how does the model see a cut?',
    async check(agent) {
      const run = await session(agent);
      const system = systemText(firstBody(agent, run));
      const paths = [
        join(run.home, '.learn-agent-harness', 'AGENTS.md'),
        join(run.workspace, 'AGENTS.md'),
        join(run.workspace, 'pkg', 'CLAUDE.md'),
      ];
      const all = FILES.map(named).join(', ');
      const at = FILES.map((file) => system.indexOf(file.rule));
      const lost = FILES.filter((_, i) => at[i] < 0).map(named);
      need(lost.length === 0, ASKED, `sent no text of ${lost.join(', ')}`, `the text of ${all}`);
      const order = [...FILES.keys()].sort((a, b) => at[a] - at[b]).map((i) => named(FILES[i]));
      const nearestLast = `most general first, nearest last: ${all}`;
      const inOrder = at[0] < at[1] && at[1] < at[2];
      need(inOrder, ASKED, `sent them in the order ${order.join(', ')}`, nearestLast);
      const unnamed = paths.filter((path) => !system.includes(path));
      const under = 'each file under its path';
      need(unnamed.length === 0, ASKED, `named no path ${brief(unnamed[0])}`, under);
      const environment = Math.max(system.indexOf(TEST_MODEL), system.indexOf(process.version));
      const last = 'the instruction files after the rest of the prompt';
      need(at[0] > environment, ASKED, 'sent an instruction file before the environment', last);
      const root = 'no file from above the repository’s root (the folder with .git)';
      need(!system.includes(ABOVE), ASKED, 'sent the CLAUDE.md above the repository', root);

      // What was kept of each file: the run of its letter after its start mark.
      const kept = FILES.map(({ letter }) => {
        const mark = `${letter.toUpperCase()}-START `;
        const start = system.indexOf(mark);
        if (start < 0) return { count: 0, end: -1, whole: false };
        let end = start + mark.length;
        while (system[end] === letter) end++;
        const whole = system.includes(`${letter.toUpperCase()}-END`);
        return { count: end - start - mark.length, end, whole };
      });
      const counts = `kept ${kept.map((k, i) => `${k.count} of ${FILES[i].length}`).join(', ')}`;
      const budget =
        `within 8,000 characters a file and 20,000 in all, spent from the nearest: ${all} ` +
        'cut to about 5,000, cut to 8,000, whole';
      need(kept[2].whole, ASKED, `cut the nearest file, pkg/CLAUDE.md (${counts})`, budget);
      const fits = kept.every((k) => k.count > 0 && k.count <= FILE_BUDGET);
      const total = kept.reduce((sum, k) => sum + k.count, 0);
      need(fits && total <= TOTAL_BUDGET && !kept[0].whole, ASKED, `${counts} letters`, budget);

      // A cut is marked: between what was kept of a file and the next file's path, some text that
      // is neither the file's nor the next one's heading (the line that ends in its path).
      for (const i of [0, 1]) {
        const segment = system.slice(kept[i].end, system.indexOf(paths[i + 1], kept[i].end));
        const lines = segment.split('\n').slice(0, -1);
        const marked = lines.some((line) => line.trim() !== '' && !/^<\/[^>]*>$/.test(line.trim()));
        const then = brief(segment, 40);
        const did = `cut ${named(FILES[i])} after ${kept[i].count} letters, then ${then}`;
        need(marked, ASKED, did, 'a cut marked where it falls');
      }
    },
  },
  {
    name: 'the date and git status go with the prompt, outside the cached prefix',
    hint:
      'What in the prompt changes from one turn to the next, and where can it go so that the ' +
      'tools and the system prompt stay the same bytes? Once sent, does it ever change?',
    async check(agent) {
      const run = await session(agent);
      const body = firstBody(agent, run);
      const day = dates();
      const where = 'the date and git status in the user’s message, not in the tools or system';
      const early = [...day, BRANCH, STATUS].filter((fact) => front(body).includes(fact));
      need(early.length === 0, ASKED, `sent ${early.join(', ')} in the system prompt`, where);
      const message = body.messages?.at(-1);
      const said = JSON.stringify(message ?? null);
      const absent = [
        day.some((d) => said.includes(d)) ? '' : 'the date (YYYY-MM-DD)',
        said.includes(BRANCH) ? '' : `the branch (${BRANCH})`,
        said.includes(STATUS) ? '' : `the changed files (${STATUS})`,
      ].filter(Boolean);
      const without = `sent ${shape(message)}, without ${absent.join(', ')}`;
      need(absent.length === 0, ASKED, without, where);
      const at = [...day, BRANCH].map((fact) => said.indexOf(fact)).filter((i) => i >= 0);
      const context = Math.min(...at);
      const prompt = said.indexOf(FIRST);
      const first = 'the prompt first, then its context';
      need(prompt >= 0 && prompt < context, ASKED, `sent ${brief(said, 120)}`, first);

      // Stored with the prompt: the next turn sends the first prompt's message as it was.
      const third = accepted(agent, run, 3, ASKED, 'a third request, for the second prompt');
      const again = third.body.messages?.find((m: any) => JSON.stringify(m).includes(FIRST));
      const same = 'the first prompt’s message, its context included, sent again unchanged';
      const as = `sent it again as ${brief(unmarked(again), 120)}`;
      need(unmarked(again) === unmarked(message), ASKED, as, same);
      const latest = JSON.stringify(third.body.messages?.at(-1) ?? null);
      const own = 'the second prompt with a context of its own';
      const its = day.some((d) => latest.includes(d)) && latest.includes(BRANCH);
      need(its, ASKED, `sent ${brief(latest, 120)}`, own);
    },
  },
  {
    name: 'the system prompt is built again at each turn, and kept within a turn',
    hint:
      'The model edits CLAUDE.md during a turn. When should the prompt read it again, and why ' +
      'not in the middle of the turn, where thinking blocks go back with each request?',
    async check(agent) {
      const run = await session(agent);
      const edited = readFileSync(join(run.workspace, 'pkg', 'CLAUDE.md'), 'utf8').includes(NEW);
      const edit = `pkg/CLAUDE.md edited by the edit_file call: "${OLD}" → "${NEW}"`;
      need(edited, ASKED, 'left pkg/CLAUDE.md as it was: the edit_file call failed', edit);
      const first = accepted(agent, run, 1, ASKED, 'a first request');
      const kept = 'the turn’s second request with the system prompt the turn began with';
      const second = accepted(agent, run, 2, ASKED, kept);
      const changed = systemText(second.body).includes(NEW) ? 'with the edit' : 'changed';
      const same = JSON.stringify(second.body.system) === JSON.stringify(first.body.system);
      need(same, ASKED, `sent request 2 with another system prompt (${changed})`, kept);
      const third = accepted(agent, run, 3, ASKED, 'a request for the second prompt');
      const next = systemText(third.body);
      const rebuilt = `the next turn’s system prompt built again: pkg/CLAUDE.md with "${NEW}"`;
      const did = 'sent the second turn’s system prompt with pkg/CLAUDE.md as before the edit';
      need(next.includes(NEW) && !next.includes(OLD), ASKED, did, rebuilt);
      ended(agent, run, ASKED, 'both answers, then exit code 0 after "exit"');
    },
  },
  {
    name: 'two cache breakpoints: the system prompt’s end, and the conversation’s',
    hint:
      'The API caches the prefix up to each block marked with cache_control (4 marks at most). ' +
      'Which part is the same on every request, and which mark must move so that the next ' +
      'request reads all of this one?',
    async check(agent) {
      const run = await session(agent);
      const first = accepted(agent, run, 1, ASKED, 'a first request');
      const second = accepted(agent, run, 2, ASKED, 'a second request');
      for (const [i, request] of run.requests.entries()) {
        const n = breakpoints(request.body);
        need(n <= 4, ASKED, `marked ${n} cache breakpoints in request ${i + 1}`, '4 at most');
      }
      const { body } = first;
      const system = lastBlock(body.system);
      const one = 'cache_control on the last block of the system prompt';
      const sent = brief(system ?? body.system ?? null, 80);
      need(system?.cache_control, ASKED, `sent the system prompt’s last block as ${sent}`, one);

      // What the fake API reported, as the real one would: request 1 was written to the cache,
      // and request 2, which is request 1 and then more, reads all of it back.
      const wrote = first.usage?.cache_creation_input_tokens ?? 0;
      need(wrote > 0, ASKED, 'wrote nothing to the cache with request 1', 'request 1 cached');
      const read = second.usage?.cache_read_input_tokens ?? 0;
      const all = `request 2 reading all of request 1 from the cache (${first.inputTokens} tokens)`;
      need(read >= first.inputTokens, ASKED, `sent request 2, which read ${read} tokens`, all);
      const last = lastBlock(body.messages?.at(-1)?.content);
      const two = 'cache_control on the last block of the last message';
      const lastSent = `sent the last message’s last block as ${brief(last ?? null, 80)}`;
      need(last?.cache_control, ASKED, lastSent, two);
    },
  },
];
