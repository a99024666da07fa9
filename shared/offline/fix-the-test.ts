/**
 * The task "fix the failing test", played as a model works: each step is decided from what the
 * tools have shown so far (fix-facts.ts), never from a fixed script.
 *
 *   run the tests → the failing test, where it is, what it expected and got → read that test →
 *   the function it calls and the module it comes from → read that function (from s03, ask a
 *   sub-agent where it is) → the comparison that leaves out the number the test is about → edit
 *   it (read again and retry if the edit does not apply) → run the tests again → answer
 *
 * Each reply thinks first (what it saw, what it will do next), then writes down what it learned,
 * then makes one tool call; the last one answers instead.
 */
import type { MessageReply } from '../fake-anthropic.ts';
import { fillTemplate, placeLine, ruleNote, type Rule } from './changelog.ts';
import type { Call, Request } from './conversation.ts';
import type { Failing } from './outputs.ts';
import { boundaries, notes, README, readFacts, type Change, type Facts } from './fix-facts.ts';
import { callKind, editLine, fileOf, lookUp, readLines, runTests } from './looking.ts';
import { search, TEST_COMMAND } from './looking.ts';
import { readHits, readNumbered } from './outputs.ts';
import { step as reply, type ToolCall } from './reply.ts';
import { bodyOf, explain, type Need } from './source.ts';
import type { Task } from './tasks.ts';

export { factSentences, readFacts } from './fix-facts.ts';

export interface Step {
  /** The step in a few words: "Next: …" in its note, and a summary's next step. */
  what: string;
  thinking: string;
  call?: ToolCall;
  /** Set on a last step: the answer, and no call. */
  answer?: string;
}

export function fixTheTest(task: Task, request: Request): MessageReply {
  const facts = readFacts(task, request);
  const next = nextStep(facts, request.tools);
  if (next.answer !== undefined) return reply(next.thinking, next.answer);
  return reply(next.thinking, noteFor(facts, next), next.call);
}

/** The facts known, as the sentences its notes write them, in the order they were learned. */
export function knownFacts(facts: Facts): string[] {
  const { before, failing, fn, module, spec, change, edited, after, reported } = facts;
  const known = [
    before && notes.before(before),
    failing && notes.failing(failing),
    fn && module && notes.target(fn, module),
    spec && notes.spec(spec),
    spec === null && notes.noSpec(README),
    reported && fn && change && notes.reported(fn, change.file),
    change && !edited && notes.change(change),
    edited && notes.edited(edited),
    facts.failedEdits > 0 && facts.stale && notes.failedEdit(facts.stale.file, facts.failedEdits),
    after && notes.after(after),
  ];
  return known.filter((s): s is string => typeof s === 'string');
}

/** The note of a step: the facts not written down yet, and what comes next. */
function noteFor(facts: Facts, next: Step): string {
  const fresh = knownFacts(facts).filter((s) => !facts.written.has(s));
  return [...fresh, `Next: ${next.what}.`].join(' ');
}

const shown = (call: Call) =>
  call.name === 'bash' ? `\`${call.input.command}\`` : `${call.name} ${fileOf(call) ?? ''}`.trim();

/** Picking up after Ctrl+C, or after a session that was killed: it says so, and goes on. */
function resumed(facts: Facts): string {
  const { last } = facts;
  if (last && !last.result?.usable) {
    return `My last step, ${shown(last)}, was interrupted before it gave a result. `;
  }
  if (!facts.interrupted) return '';
  const after = last ? ` after ${shown(last)}` : '';
  return `You stopped me (Ctrl+C)${after}; I pick up from what I know. `;
}

/** What the last call showed, in a sentence: the start of the next step's thinking. */
function saw(last: Call | undefined): string {
  if (!last?.result?.usable) return '';
  const { text } = last.result;
  const kind = callKind(last);
  if (kind === 'read') {
    const lines = [...readNumbered(text).keys()];
    return lines.length ? `I read ${fileOf(last)}, lines ${lines[0]} to ${lines.at(-1)}. ` : '';
  }
  if (kind === 'search') {
    const hits = readHits(text, { tool: last.name === 'grep', file: fileOf(last) });
    if (hits.length === 0) return `The search in ${fileOf(last)} found nothing. `;
    const [hit] = hits;
    return `The search found ${hit.file}:${hit.line}: \`${hit.text.trim()}\`. `;
  }
  return kind === 'report' ? "The sub-agent's report is back. " : '';
}

const capital = (s: string) => s[0].toUpperCase() + s.slice(1);
const answer = (thinking: string, text: string): Step => {
  return { what: 'answer', thinking, answer: text };
};

export function nextStep(facts: Facts, tools: Set<string>): Step {
  const next = decide(facts, tools);
  return { ...next, thinking: `${resumed(facts)}${next.thinking}` };
}

function decide(facts: Facts, tools: Set<string>): Step {
  const { failing, before, after, fn, module, change, edited } = facts;
  const testCommand = facts.testCommand ?? TEST_COMMAND;
  const named = facts.testCommand === undefined ? '' : ` (${facts.testCommand})`;
  if (facts.failed !== undefined) return failed(facts.last!, facts.failed, testCommand);
  if (!before && !after && !failing) {
    // A run you stopped halfway (Ctrl+C), then asked to continue: run it again. One that ended
    // before node's summary by itself (killed by the tool's timeout, say) has ended the task.
    const cut = facts.last && callKind(facts.last) === 'tests' && facts.last.result?.usable;
    const how = testCommand === TEST_COMMAND
      ? 'with its TAP reporter'
      : "as the project's package.json does";
    const first = "The task is to fix the failing test. First I want to see it fail, in node's " +
      `own words: which test, where, what it expected. I'll run node's test runner ${how}, ` +
      "which puts each failure's location and its expected and actual values on lines of " +
      'their own.';
    const again = "My test run was cut short: its output ends before node's summary. I'll " +
      'run the tests again.';
    return {
      what: `run the tests${named}`,
      thinking: cut ? again : first,
      call: runTests(testCommand),
    };
  }
  if (before && before.total === 0) {
    return answer('node found no tests.', `${testCommand} ran no tests here (tests 0): there ` +
      `is no failing test to fix. ${ONLY_NODE}`);
  }
  if (before && !failing) {
    const all = before.pass === before.total;
    return answer('The run shows nothing I can fix.', all
      ? `All ${before.total} tests pass (${testCommand}): there is no failing test to fix.`
      : `${before.total - before.pass} test(s) fail, but I could not read from node's output ` +
        'which one: a scripted model stops here.');
  }
  if (failing && failing.file.startsWith('demo/')) {
    return answer('This is the repo itself, not a copy of its sample project.',
      `The failing test is in ${failing.file}: that is demo/, the sample project this repo ` +
      'ships, and I leave it as it is. Run `npm run demo <chapter>` from the repo and ask me ' +
      'there: it works on a copy.');
  }
  if (failing && failing.expected === undefined && failing.actual === undefined) {
    return wholeFailure(failing);
  }
  if (failing && (!fn || !module)) return findTarget(facts, tools);
  if (facts.spec === undefined && !change && !edited) return checkSpec(facts, tools);
  if (!change && !edited) return findChange(facts, tools);
  if (change && !edited) return makeEdit(facts, change, tools);
  if (edited && !after) {
    return {
      what: `run the tests again${named}`,
      thinking: `The edit applied: line ${edited.line} of ${edited.file} now ` +
        `reads \`${edited.after}\`. Now I check it the way it failed: all the tests again, not ` +
        'just the one, in case the change broke another.',
      call: runTests(testCommand),
    };
  }
  if (after && after.pass < after.total) {
    return answer('The change did not fix it.',
      `After my change (${edited ? notes.edited(edited) : 'an edit'}), ` +
      `${after.total - after.pass} of ${after.total} tests still fail. I stop here rather than ` +
      'guess: a scripted model knows one kind of bug.');
  }
  if (!edited || !after) {
    return answer('I have lost track of this task.', 'I cannot tell from this conversation how ' +
      'far the task got; ask me again: fix the failing test.');
  }
  const { rule } = facts;
  if (rule && !facts.ruleLine && tools.has('edit_file')) return followRule(facts, rule, tools);
  return finalAnswer(facts);
}

// Said where the project may use another test runner: what this script can and cannot run.
const ONLY_NODE = "I can run only node's own test runner (node --test): if this project's tests " +
  'run with another one (its package.json says which, under scripts.test: jest, say), run them ' +
  'that way yourself.';

/** The last call failed, in a way another try would not mend: say what the tool said, and stop. */
function failed(last: Call, said: string, testCommand: string): Step {
  const kind = callKind(last);
  const quoted = `“${said}”`;
  if (kind === 'tests') {
    const hung = /\bkilled\b/.test(said)
      ? ' A test that hangs would do the same every time, so I do not run them again; ' +
        '`node --test --test-timeout=10000` names the test that does not finish.'
      : '';
    return answer('The test run did not finish.', `My test run (${testCommand}) ended ` +
      `without node's summary: the tool says ${quoted}.${hung} I stop here.`);
  }
  const what = {
    read: `I could not read ${fileOf(last)}`,
    search: `My search in ${fileOf(last) ?? 'the project'} failed`,
    edit: `My edit of ${fileOf(last)} failed`,
    report: 'The sub-agent failed',
    other: `${shown(last)} failed`,
  }[kind];
  return answer(`${what}; trying again would fail the same way.`, `${what}: the tool says ` +
    `${quoted}. Trying again would fail the same way, so I stop here.`);
}

/** A failure with no values compared: the file did not load, or the test threw. */
function wholeFailure(failing: Failing): Step {
  const { file, line, name, wholeFile, error } = failing;
  if (wholeFile) {
    return answer(`${file} failed as a whole.`, `${file} failed as a whole (it did not load, ` +
      `or it exited): node says “${wholeFile.why}”. A scripted model fixes a test whose expected ` +
      `and actual values node prints, so I stop here. ${ONLY_NODE}`);
  }
  const said = error ?? 'test failed';
  return answer('The test failed without comparing values.', `The failing test is “${name}” ` +
    `(${file}:${line}), but it failed without comparing values: node says “${said}”. A ` +
    'scripted model fixes a test whose expected and actual values node prints, so I stop here.');
}

/** The failing test → the function it tests, and the module that function comes from. */
function findTarget(facts: Facts, tools: Set<string>): Step {
  const failing = facts.failing!;
  const { fn, before } = facts;
  if (!fn) {
    const listing = facts.seen.listings.get(failing.file);
    const cut = listing?.has(failing.line) ? bodyOf(listing, failing.line).missing : undefined;
    if (listing?.has(failing.line) && cut === undefined) {
      return answer('The test calls nothing I know.', `I read “${failing.name}” in ` +
        `${failing.file}, but found no function it calls: a scripted model stops here.`);
    }
    // From a few lines above: the test before it often says where the boundary is, too.
    const from = cut ?? Math.max(1, failing.line - 6);
    const run = before ? `The run shows ${before.pass} of ${before.total} passing. ` : '';
    return {
      what: `read the test, ${failing.file} lines ${from} to ${from + 20}`,
      thinking: `${saw(facts.last)}${run}The one that fails is “${failing.name}”, at ` +
        `${failing.file} line ${failing.line}: it expected ${failing.expected} and got ` +
        `${failing.actual}. To see what it checks, and which function it calls, I'll read ` +
        `the test there.`,
      call: readLines(tools, failing.file, from, from + 20),
    };
  }
  if (facts.seen.missing.has(`import:${fn}`)) {
    return answer(`No import of ${fn}.`, `The failing test calls ${fn}, but I could not find ` +
      `where ${failing.file} imports it from: a scripted model stops here.`);
  }
  return {
    what: `find where ${failing.file} imports ${fn} from`,
    thinking: `${saw(facts.last)}${neighbours(facts)}The assertion calls ${fn}(…): that is ` +
      `the function under test, and its result is the ${failing.actual} that should be ` +
      `${failing.expected}. Its import is not in the lines I read; I will search the test file ` +
      'for it.',
    call: search(tools, 'import', fn, failing.file),
  };
}

/** The other tests read around the failing one: they often say where the boundary lies. */
function neighbours(facts: Facts): string {
  const { file, name } = facts.failing!;
  const lines = [...(facts.seen.listings.get(file)?.values() ?? [])];
  const names = lines
    .map((line) => line.match(/^\s*(?:test|it)\(\s*(['"`])(.+?)\1/)?.[2])
    .filter((other): other is string => Boolean(other) && other !== name);
  if (names.length === 0) return '';
  return `Around it: ${names.map((n) => `“${n}”`).join(', ')}. `;
}

/** Is the test right? The project's README should state the rule it checks. */
function checkSpec(facts: Facts, tools: Set<string>): Step {
  const { fn, module, failing } = facts;
  return {
    what: `read ${README}, for the rule the test checks`,
    thinking: `${saw(facts.last)}${fn} comes from ${module}. Before I change code to make a ` +
      `test pass, I want to know that the test is the one that is right: “${failing!.name}” ` +
      `is a rule of the shop, and a project writes its rules down. I'll read its ${README}.`,
    call: readLines(tools, README),
  };
}

/** What the README said, as the step after reading it thinks it. */
function judged(facts: Facts): string {
  if (!facts.last || fileOf(facts.last) !== README || callKind(facts.last) !== 'read') return '';
  if (!facts.spec) return `${README} does not state the rule, so I take the test as the rule. `;
  return `${README} states it, at line ${facts.spec.line}: “${facts.spec.text}”. So the test is ` +
    'right, and the code is what is wrong. ';
}

/** The function under test → the line that leaves out the number the test is about. */
function findChange(facts: Facts, tools: Set<string>): Step {
  const { fn, module, failing, stale } = facts as Facts & { fn: string; module: string };
  const seen = judged(facts) || saw(facts.last);
  // An edit that did not apply: the file is not what was read. Read it again.
  if (stale && !facts.seen.listings.has(stale.file)) {
    const from = Math.max(1, stale.line - 20);
    return {
      what: `read ${stale.file} again, around line ${stale.line}`,
      thinking: `${seen}The edit did not apply: the text I gave as the old one is not in ` +
        `${stale.file} as it is now. The file must have changed since I read it, so I will take ` +
        'another look before trying again.',
      call: tools.has('read_file') ? readLines(tools, stale.file, from, from + 44)
        : readLines(tools, stale.file),
    };
  }
  if (tools.has('agent') && !facts.reported) {
    return {
      what: `ask a sub-agent where ${fn} is defined`,
      thinking: `${seen}${fn} comes from ${module}. Finding the line that decides means reading ` +
        'code I will not need afterwards; a sub-agent can explore it in a fresh context and ' +
        'report back just the file, the lines and the code.',
      call: {
        name: 'agent',
        input: {
          task: `Find where ${fn} is defined: ${failing!.file} imports it from ${module}. ` +
            `Report the file, the line numbers and the code of ${fn}, and of the functions and ` +
            'constants its conditions use from the same file.',
        },
      },
    };
  }
  const wanted = boundaries(facts);
  const explained = explain(facts.seen, fn, module, wanted);
  if (!('need' in explained)) {
    const where = 'done' in explained ? explained.done.file : module;
    const number = wanted.join(' or ') || 'the number the test is about';
    return answer('No boundary to fix.', `I read ${fn} in ${where}, but found no comparison ` +
      `that leaves out ${number}: a scripted model knows only that kind of bug, so I stop here.`);
  }
  const { need } = explained;
  const heard = facts.reported ? 'The report does not show all I need. ' : '';
  const file = need.kind === 'lines' ? need.file : need.where;
  // With bash only, the whole file at once (`cat -n`); with read_file, a page at a time.
  if (!tools.has('read_file') && need.kind !== 'constant' && file?.endsWith('.js')) {
    return {
      what: `read ${file}`,
      thinking: `${seen}${heard}${fn} comes from ${file}. I'll read that file with line numbers, ` +
        'to find where it is defined and the comparison that decides.',
      call: readLines(tools, file),
    };
  }
  const why = {
    definition: `${fn} comes from ${module}. I'll search ${file} for where ` +
      `${need.kind === 'lines' ? '' : need.name} is defined.`,
    lines: `That is where ${fn} starts. I'll read the code there, and what is around it: the ` +
      'helpers and constants it uses are often just above.',
    constant: `A comparison there uses ${need.kind === 'lines' ? '' : need.name}, whose value I ` +
      'have not seen yet; I will look it up.',
  }[need.kind];
  const call = lookUp(tools, need, facts.seen);
  return { what: describeNeed(need), thinking: `${seen}${heard}${why}`, call };
}

const describeNeed = (need: Need) =>
  need.kind === 'lines' ? `read ${need.file} around line ${need.from - 1}`
    : `find where ${need.name} is ${need.kind === 'constant' ? 'set' : 'defined'}`;

function makeEdit(facts: Facts, change: Change, tools: Set<string>): Step {
  if (facts.failedEdits >= 2) {
    return answer('The edit keeps failing.', `I found the line to change (${notes.change(change)}` +
      `), but my edit did not apply twice; I stop here. Make it by hand: ${change.file}:` +
      `${change.line}.`);
  }
  const { failing } = facts;
  // Right after the report: what it shows. Later (after a summary, say): where it came from.
  const justReported = facts.last && callKind(facts.last) === 'report';
  const source = justReported ? 'It shows that ' : facts.reported ? 'The sub-agent reported that '
    : '';
  const op = change.from.match(/[<>]/)?.[0] ?? '>';
  const why = capital(change.why);
  // Where the line is: in the function under test, or in a helper its condition asks.
  const explained = explain(facts.seen, facts.fn ?? '', facts.module);
  const owner = 'done' in explained
    ? explained.done.bodies.find((b) => b.from <= change.line && change.line <= b.to)
    : undefined;
  const helper = owner && owner.name !== facts.fn
    ? `${facts.fn} decides with ${owner.name}(): `
    : '';
  const inside = owner ? `, in ${owner.name},` : '';
  const line = `line ${change.line} of ${change.file}${inside} reads \`${change.before}\`.`;
  const shows = source || helper ? `${source}${helper}${line}` : capital(line);
  const useEdit = tools.has('edit_file');
  return {
    what: `change line ${change.line} of ${change.file}`,
    thinking: `${saw(facts.last)}${shows} ${why}: the test “${failing?.name}” expects ` +
      `${failing?.expected} and gets ${failing?.actual}. The fix is one character, ${op} → ` +
      `${op}=, and nothing else. I'll make it with ${useEdit ? 'edit_file' : 'sed -i'}.`,
    call: useEdit
      ? editLine(tools, change.file, change.line, change.before, change.after)
      : editLine(tools, change.file, change.line, change.from, change.to),
  };
}

/** The line the project's rule asks for: read the file, then add the line where it goes. */
function followRule(facts: Facts, rule: Rule, tools: Set<string>): Step {
  const { after, edited, fn } = facts;
  const lines = facts.seen.listings.get(rule.file);
  if (!lines) {
    return {
      what: `read ${rule.file}, as the project's instructions ask`,
      thinking: `All ${after!.total} tests pass now. The project's instructions (${rule.source}, ` +
        `in my system prompt) ask for a line in ${rule.file} under ${rule.heading} after fixing ` +
        `a bug. I'll read ${rule.file} first, to put it in the right place.`,
      call: readLines(tools, rule.file),
    };
  }
  const op = edited!.from.match(/[<>]/)?.[0] ?? '>';
  const [verb, ...rest] = (facts.failing?.name ?? '').split(' ');
  const did = /s$/.test(verb) ? `did not ${verb.slice(0, -1)} ${rest.join(' ')}` : 'failed a test';
  const what = `${fn} ${did}: \`${op}\` where \`${op}=\` was meant`;
  const entry = fillTemplate(rule, what, edited!.file);
  const place = placeLine(rule, lines, entry);
  if (!place) {
    return answer(`No ${rule.heading} in ${rule.file}.`, `${finalAnswer(facts).answer}\n` +
      `${rule.file} has no ${rule.heading} section, so I did not add the line the project ` +
      'asks for.');
  }
  return {
    what: `add the line to ${rule.file}`,
    thinking: `${saw(facts.last)}${rule.file} has a ${rule.heading} section. The new line goes ` +
      `first in its list, in the project's words: “${entry}”.`,
    call: {
      name: 'edit_file',
      input: { file_path: rule.file, old_string: place.old, new_string: place.new },
    },
  };
}

function finalAnswer(facts: Facts): Step {
  const { failing, after, rule, ruleLine } = facts;
  const change = facts.edited!;
  const lines = [
    `Fixed. The failing test was “${failing?.name}” (${failing?.file}:${failing?.line}): ` +
      `expected ${failing?.expected}, got ${failing?.actual}.`,
    change.why ? `The cause: in ${change.file}, ${change.why}.` : '',
    facts.spec ? `The rule, ${facts.spec.file}:${facts.spec.line}: “${facts.spec.text}”.` : '',
    `The change, ${change.file} line ${change.line}: \`${change.before}\` → \`${change.after}\`.`,
    `Tests: ${after!.pass} of ${after!.total} pass (${facts.testCommand ?? TEST_COMMAND}).`,
    rule && ruleLine ? ruleNote(rule, ruleLine) : '',
  ];
  return answer(`The tests pass, ${after!.pass} of ${after!.total}. Time to say what I found ` +
    'and what I changed.', lines.filter(Boolean).join('\n'));
}
