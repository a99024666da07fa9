/**
 * What every chapter's agent loop must do, from s01 on. Each chapter's test file calls
 * `loopBehaviours('sNN')`, so a later chapter that breaks the loop fails the same checks s01 passes.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpError, other, reply, text, toolUse, type MessageReply } from '../../shared/fake-anthropic.ts';
import { REPO, TEST_KEY, promptOf, runChapter, runRepl, toolResults as lastResults } from '../helpers/run-chapter.ts';
import { pressInputs, respondToPresses, tallyPresses } from '../helpers/ctrl-c.ts';
import { jobsLeft, startJob } from '../helpers/jobs.ts';
import { once, shared } from '../helpers/shared.ts';

/** What the chapter's offline banner must list: the commands that work with its tools, and no others. */
export interface LoopOptions {
  offlineCommands: string[];
  /** What Ctrl+C during a turn does: ends the agent (s01–s03), or ends only the turn (from s04 on). */
  ctrlC?: 'exits' | 'cancels the turn';
  /**
   * Also test Ctrl+C under the tsx CLI, which relays a SIGINT itself when the program is slow to
   * acknowledge it: in the chapters that introduce or change Ctrl+C handling. Plain node runs always.
   * A tsx run costs about seven bundle runs; where this one runs, the offline test runs under node.
   */
  ctrlCUnderTsx?: boolean;
  /**
   * Also run the plumbing tests: API errors and retries, an unreachable URL, SIGTERM, a closed stdout,
   * the command-line flags. Their code comes from s01 and hardly changes: they run where it is made
   * (s01) and in the last chapter (s06), which has every later change to main() and the signals. Each
   * is a process of its own, so leaving them out of the chapters between keeps the suite fast.
   */
  plumbing?: boolean;
  /**
   * Test that a prompt the API refuses as too long is not kept: s01–s03, in a REPL of their own
   * (s04 tests it with -c in its own file, s05 and s06 refuse such a prompt before sending it).
   */
  tooLongPrompt?: boolean;
  /**
   * Run the offline REPL test through the tsx CLI, as readers run the chapter: one test per chapter
   * does, to prove it runs that way (a tsx run costs about seven bundle runs). The default where no
   * other test of the chapter goes through tsx; off where one does (Ctrl+C under tsx, say).
   */
  offlineViaTsx?: boolean;
  /** What every round line of the offline REPL says too (s06: its cost is not charged). */
  offlineRoundLine?: RegExp;
}

export function loopBehaviours(chapter: string, options: LoopOptions) {
  const { offlineCommands, ctrlC = 'exits', ctrlCUnderTsx = false, plumbing = false } = options;
  const offlineViaTsx = options.offlineViaTsx ?? !ctrlCUnderTsx;
  const offlineUnder = offlineViaTsx ? 'run as a reader does, through tsx' : 'under node; another test goes through tsx';
  // Left out, not skipped, where they do not run: a clean `npm test` reports nothing skipped.
  const plumbingIt = plumbing ? it : (_name: string, _test: () => Promise<void>) => {};
  const runners: [string, boolean][] = [['plain node', false]];
  if (ctrlCUnderTsx) runners.unshift(['npx tsx (what readers run)', true]);
  // The chapter runs under a shell in its process group that says so if the terminal sends the
  // group a SIGINT, as it does to tsx when Ctrl+C is not read as a key (shared/cli.ts).
  const GROUP_SIGINT = '[the terminal sent the process group SIGINT]';
  const watchGroup = ['sh', '-c', `trap 'echo "${GROUP_SIGINT}" >&2' INT; "$@"`, 'sh'];
  // What the result of a command that leaves a job running says (shared/processes.ts).
  const LEFT_RUNNING = /still running in the background: process group (\d+)/;
  // Where Ctrl+C cancels the turn: how many turns to cancel in one run; npm run soak:ctrlc does more.
  const pressRuns = runners.map(([how, viaTsx]): [number, string, boolean] => [viaTsx ? 8 : 4, how, viaTsx]);
  describe.concurrent(`${chapter}: a -p run of four tool rounds`, () => {
    // One process for the rules of a turn that calls tools (each round, one reply of the script):
    //   1 a text, then a call · 2 a whitespace-only text (real models send one sometimes), then six
    //   calls in one reply: two that echo, one without its input, one with a huge output, one that
    //   leaves a job running in the background (as `npm run dev > dev.log 2>&1 &` does), one whose
    //   output has emoji where it is cut · 3 a text and a call in a reply that says end_turn (some
    //   compatible endpoints do) · 4 the answer.
    // The emoji: 9,999 x, an emoji, 500 y, an emoji, 9,999 z; keeping 10,000 characters at each end
    // splits both.
    const x = (n: number, c: string) => `head -c ${n} /dev/zero | tr '\\0' ${c}`;
    const smile = "printf '\\xf0\\x9f\\x98\\x80'";
    const EMOJI_OUTPUT = `${x(9999, 'x')}; ${smile}; ${x(500, 'y')}; ${smile}; ${x(9999, 'z')}`;
    const r = shared(() =>
      runChapter(chapter, {
        args: ['-p', 'say hello'],
        replies: [
          reply(text('Looking.'), toolUse('bash', { command: 'echo "hello from bash"' }, 'toolu_A')),
          reply(
            text('\n\n'),
            toolUse('bash', { command: 'echo first' }, 'toolu_1'),
            toolUse('bash', { command: 'echo second' }, 'toolu_2'),
            toolUse('bash', {}, 'toolu_bad'),
            toolUse('bash', { command: 'seq 1 200000' }, 'toolu_big'),
            toolUse('bash', { command: startJob(true) }, 'toolu_job'),
            toolUse('bash', { command: EMOJI_OUTPUT }, 'toolu_emoji'),
          ),
          { content: [text('Running it.'), toolUse('bash', { command: 'echo made > made.txt' }, 'toolu_end')], stop_reason: 'end_turn' },
          reply(text('All done.')),
        ],
      }),
    );
    /** The tool_results sent after round n (1-based). */
    const resultsOf = (n: number) => lastResults(r().requests[n].body);

    it('runs a bash tool call and sends its output back as a tool_result with the same id', () => {
      const run = r();
      expect(run.code, `the run should exit 0; stderr was:\n${run.stderr}`).toBe(0);
      expect(run.requests, 'one call per reply: each tool round sends the results back').toHaveLength(4);
      const [result] = resultsOf(1);
      expect(result, 'after a tool_use the loop must send a tool_result answering the same id').toMatchObject({ tool_use_id: 'toolu_A' });
      expect(JSON.stringify(result.content), 'the tool_result must carry what the command printed').toContain('hello from bash');
      expect(run.stderr, 'each tool call is shown to the reader as "$ <command>", on stderr').toContain('$ echo "hello from bash"');
      expect(run.stdout, 'the final answer is printed').toContain('All done.');
    });

    it('prints only the model’s text on stdout; tool calls, thinking and usage lines go to stderr', () => {
      const run = r();
      // (The whitespace-only text of round 2 is printed as it came: blank lines.)
      const texts = run.stdout.replace(/\n+/g, '\n');
      expect(texts, 'stdout is the model’s text alone, so `-p … > answer.txt` keeps just that').toBe('Looking.\nRunning it.\nAll done.\n');
      expect(run.stdout, 'a reply’s text ends its line before the tools run').toMatch(/^Looking\.\n/);
      expect(run.stderr, 'no colour codes when stderr is not a terminal').not.toMatch(/\x1b\[/);
    });

    it('prints a usage line with the input tokens after every model call', () => {
      const run = r();
      const shown = [...run.stderr.matchAll(/tokens in (\d+)/g)].map((m) => Number(m[1]));
      // input_tokens as the API reports it: with prompt caching (s06) only what follows the last breakpoint.
      const reported = run.requests.map((q) => q.usage?.input_tokens);
      expect(shown, 'one "tokens in N" line per call, with the API-reported numbers').toEqual(reported);
      const sent = run.requests.map((q) => q.inputTokens); // the whole input, cached or not
      expect(sent[1], 'the second call sends the whole conversation again, so its input is larger').toBeGreaterThan(sent[0]);
    });

    it('with a custom base URL, sends the key as a Bearer token and as x-api-key (vendors read only that)', () => {
      const { headers } = r().requests[0];
      expect(headers['authorization'], 'SDK 1.x authenticates with Bearer').toBe(`Bearer ${TEST_KEY}`);
      expect(headers['x-api-key'], 'Anthropic-compatible vendors such as DeepSeek read x-api-key').toBe(TEST_KEY);
    });

    it('drops a whitespace-only text block before sending the reply back (the API refuses it)', () => {
      // runChapter fails by itself if the fake refused a request.
      const sent = r().requests[2].body.messages[3].content as any[];
      expect(sent.filter((b) => b.type === 'text'), 'the whitespace-only text is not sent back').toEqual([]);
      expect(sent.filter((b) => b.type === 'tool_use'), 'the calls are').toHaveLength(6);
    });

    it('answers several calls of one reply in order, in a single user message', () => {
      const ids = resultsOf(2).map((x: any) => x.tool_use_id);
      const calls = ['toolu_1', 'toolu_2', 'toolu_bad', 'toolu_big', 'toolu_job', 'toolu_emoji'];
      expect(ids, 'every result, in the order of the calls, in ONE message').toEqual(calls);
      expect(JSON.stringify(resultsOf(2)[0].content)).toContain('first');
      expect(JSON.stringify(resultsOf(2)[1].content)).toContain('second');
    });

    it('answers a call without its required input with an is_error result, and goes on', () => {
      expect(resultsOf(2)[2], 'a malformed tool input is the model’s mistake: tell it, with is_error').toMatchObject({ is_error: true });
      expect(JSON.stringify(resultsOf(2)[2].content)).toContain('command');
      expect(r().stderr, 'the call is shown as the model sent it, not as "$ undefined"').not.toContain('$ undefined');
      expect(r().requests, 'the turn went on').toHaveLength(4);
    });

    it('caps huge command output, keeping its head and tail', () => {
      const content = JSON.stringify(resultsOf(2)[3].content);
      expect(content.length, 'about 1.3 MB of numbers must not go to the model whole').toBeLessThan(40_000);
      expect(content, 'the head survives').toMatch(/^"1\\n2\\n3/);
      expect(content, 'the tail survives').toContain('199999');
    });

    it('cuts a long output between characters, never inside an emoji (the API refuses half of one)', () => {
      // The strict fake refuses half a character: that it served round 3 is the proof.
      expect(resultsOf(2)[5].content, 'the head ends before the first emoji').toMatch(/x\n… \(/);
      expect(resultsOf(2)[5].content, 'the tail starts after the second').toMatch(/…\nz/);
    });

    it('names a job left running in the background to the model, and kills it when the agent exits', async () => {
      expect(resultsOf(2)[4].content, 'the result names the group the job is in').toMatch(LEFT_RUNNING);
      expect(await jobsLeft(r().workspace), 'the job must not outlive the agent').toEqual([]);
    });

    it('runs the tool calls of a reply that says end_turn, and the turn goes on to the answer', () => {
      expect(existsSync(join(r().workspace, 'made.txt')), 'the complete call was run').toBe(true);
      expect(resultsOf(3), 'its result answers the call').toMatchObject([{ tool_use_id: 'toolu_end' }]);
      expect(r().requests, 'and the loop asked again, with the result').toHaveLength(4);
    });

    it('asks for the thinking summary, shows it on stderr only, and sends the turn’s thinking back unchanged', () => {
      // The default model thinks: the fake adds a thinking block first and one before the tool call.
      const [first, second] = r().requests.map((q) => q.body);
      expect(first.thinking, 'a 5.x model: the summary is asked for').toEqual({ type: 'adaptive', display: 'summarized' });
      // The fake refuses a block that was changed, or a latest reply with some of its blocks missing:
      // that it served the second request is the proof they went back as they came.
      const back = (second.messages[1].content as any[]).filter((b) => /thinking/.test(b.type));
      expect(back.map((b: any) => b.thinking), 'both blocks of the reply go back').toEqual([
        'Working out how to answer: "say hello"',
        'Next: the bash tool.',
      ]);
      expect(back.every((b: any) => b.signature.length > 20), 'with their signatures').toBe(true);
      expect(r().stderr, 'the thinking is shown').toContain('[thinking] Working out how to answer: "say hello"');
      expect(r().stderr).toContain('[thinking] Next: the bash tool.');
      expect(r().stdout, 'and not on stdout').not.toContain('Working out');
    });
  });

  describe.concurrent(`${chapter}: a REPL session`, () => {
    // One conversation, one prompt per rule; each prompt makes exactly one model call:
    //   1 text only · 2 an API error · 3 a refusal that also holds a tool call · 4 a reply cut off at
    //   max_tokens · 5 stop_reason tool_use with no tool call · 6 a block type the loop does not know ·
    //   7 a stream that fails halfway · 8 a stream that stalls · 9 a normal answer · then Ctrl+D
    const prompts = ['first question', 'second question', 'third question', 'make a file', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth'];
    const r = shared(() =>
      runRepl(chapter, [...prompts, '\x04'], {
        // MODEL_ID unset: the chapter must fall back to the default. A 2 s stream idle clock: well past any
        // pause a busy machine makes in a stream that is going on, well before the stalled one's event.
        env: { MODEL_ID: '', STREAM_IDLE_SECONDS: '2' },
        replies: [
          reply(text('answer one')),
          httpError(400, 'something was wrong'),
          { content: [text('I cannot help with that.'), toolUse('bash', { command: 'touch refused-tool' })], stop_reason: 'refusal' },
          { content: [text('I will create it'), toolUse('bash', { command: 'touch should-not-exist' })], stop_reason: 'max_tokens' },
          { content: [text('I meant to call a tool')], stop_reason: 'tool_use' },
          reply(text('here is something new'), other({ type: 'mystery_block', data: 'x' })),
          { content: [text('partial answer'), text('never sent')], errorAfterBlocks: 1 },
          { content: [text('this never arrives')], eventDelayMs: 20_000 },
          reply(text('answer nine')),
        ],
      }),
    );
    /** The request sent for the n-th prompt (1-based). */
    const request = (n: number) => r().requests[n - 1].body;

    it('leaves on Ctrl+D (end of input)', () => {
      expect(r().timedOut, `the REPL should quit on Ctrl+D; output:\n${r().stdout}`).toBe(false);
      expect(r().code).toBe(0);
    });

    it('ends the turn when the reply calls no tool', () => {
      expect(r().requests, 'one model call per prompt: a reply without a tool call must not trigger another').toHaveLength(9);
      expect(r().stdout).toContain('answer one');
    });

    it('drops the thinking of a turn once the next one starts', () => {
      // Every prompt here is a turn of one reply, thinking included: each later request holds only
      // turns that are over. (The -p run above checks that it is kept within a turn.)
      const blocks = (body: any) => JSON.stringify(body.messages).match(/"type":"thinking"/g) ?? [];
      expect(r().requests.map((q) => blocks(q.body).length), 'none from an earlier turn').toEqual(Array(9).fill(0));
      expect(JSON.stringify(request(9).messages), 'the replies themselves are kept').toContain('answer one');
    });

    it('uses the default model that .env.example names when MODEL_ID is unset', () => {
      const documented = readFileSync(join(REPO, '.env.example'), 'utf8').match(/^MODEL_ID=(\S+)/m)?.[1];
      expect(request(1).model).toBe(documented);
    });

    it('keeps history across prompts and survives an API error', () => {
      expect(r().stdout, 'the error is shown, and the REPL goes on').toContain('something was wrong');
      const later = request(3).messages;
      expect(later[0].role).toBe('user');
      expect(promptOf(later[0]), 'the first prompt is still there').toBe('first question');
      expect(later[1], 'followed by the model’s answer').toMatchObject({ role: 'assistant' });
      expect(JSON.stringify(later.slice(2)), 'the prompt whose call failed is kept, and the next one too').toMatch(/second question[\s\S]*third question/);
    });

    it('reports a refusal, and drops the tool call it held without running it', () => {
      expect(r().stdout).toMatch(/declined|refus/i);
      expect(existsSync(join(r().workspace, 'refused-tool')), 'a tool call in a refused reply is never run').toBe(false);
      expect(JSON.stringify(request(4).messages), 'nor sent back: it would never get its result').not.toContain('refused-tool');
    });

    it('does not run a tool call from a reply cut off at max_tokens, and says so', () => {
      expect(existsSync(join(r().workspace, 'should-not-exist')), 'a cut-off tool call may have half its input: never run it').toBe(false);
      expect(r().stdout, 'the reader should see that the reply was cut').toMatch(/max_tokens/);
    });

    it('keeps the conversation valid whatever the reply held (the fake refuses every invalid request)', () => {
      // runRepl fails by itself if the fake refused a request (a dangling tool_use, an empty message…).
      const last = JSON.stringify(request(9).messages);
      expect(last, 'no tool_use is left without its result').not.toContain('should-not-exist');
      expect(last, 'a block type the loop does not know is not sent back').not.toContain('mystery_block');
      expect(last, 'the text next to it is kept').toContain('here is something new');
      expect(r().stdout).toContain('answer nine');
    });

    it('streams: text is printed as it arrives, before the reply is complete', () => {
      // Prompt 7's stream fails after its first block: a loop that waited for the whole reply before
      // printing would show nothing of it.
      expect(request(7).stream, 'the request must ask for a stream (client.messages.stream)').toBe(true);
      expect(r().stdout, 'text deltas should be written to stdout as they arrive').toContain('partial answer');
    });

    it('prints a mid-stream error on a line of its own, after the text that did arrive', () => {
      expect(r().stdout, 'streamed text, a newline, then the error').toMatch(/partial answer\n[^\n]*API error[^\n]*Overloaded/);
    });

    it('gives up on a stream that stalls, says so, and stays usable', () => {
      expect(r().stdout, 'one line that names the wait').toMatch(/sent nothing for 2 s/);
      expect(r().stdout.indexOf('answer nine'), 'the next prompt still works').toBeGreaterThan(r().stdout.indexOf('sent nothing'));
    });
  });

  if (options.tooLongPrompt) {
    it('drops a prompt the API refuses as too long, says so, and the next prompt goes through', async () => {
      // A window of 3,000 tokens: the tools, the system prompt and "hello" fit; 20,000 characters
      // (about 5,000 tokens) do not, and the fake refuses them as the API does.
      const huge = 'lorem ipsum '.repeat(1_700);
      const run = await runRepl(chapter, [huge, 'hello', '\x04'], {
        fake: { contextWindow: 3_000 },
        expectRefused: true,
        replies: [reply(text('Hi there.'))],
      });
      const [refused, next] = run.requests;
      expect(refused?.refused?.message, 'the first request is refused').toMatch(/prompt is too long/);
      expect(run.stdout, 'one line says the prompt was not kept').toMatch(/not kept/);
      expect(next?.refused, `the next prompt must not carry the huge one:\n${run.stdout.slice(-800)}`).toBeUndefined();
      expect(JSON.stringify(next.body.messages)).not.toContain('lorem ipsum');
      expect(run.stdout).toContain('Hi there.');
    });
  }

  describe.concurrent(`${chapter}: the agent loop`, () => {
    // One run for two plumbing tests: a model that does not think by default, and a 529 first.
    const retried = once(() =>
      runChapter(chapter, {
        args: ['-p', 'x'],
        env: { MODEL_ID: 'claude-sonnet-4-6' },
        replies: [httpError(529, 'Overloaded', { 'retry-after-ms': '10' }), reply(text('recovered after retry'))],
      }),
    );

    plumbingIt('asks a model that does not think by default for nothing: no thinking field', async () => {
      const run = await retried();
      expect(run.code, run.stderr).toBe(0);
      for (const { body } of run.requests) expect(body, 'another model or vendor might refuse one').not.toHaveProperty('thinking');
      expect(run.stderr).not.toContain('[thinking]');
    });

    plumbingIt('a stream that fails in a -p run is an API error: what arrived is printed, then exit 1', async () => {
      // The stream fails after the first block. (The REPL session above shows the same in a turn.)
      const broken: MessageReply = { content: [text('Partial answer that was streamed'), text('never sent')], errorAfterBlocks: 1 };
      const run = await runChapter(chapter, { args: ['-p', 'stream please'], replies: [broken] });
      expect(run.stdout, 'text deltas should be written to stdout as they arrive').toContain('Partial answer that was streamed');
      expect(run.code, 'a stream that fails is an API error: exit 1').toBe(1);
      expect(run.stderr, 'the error goes to stderr').toContain('Overloaded');
    });

    it('stops a runaway loop at its round bound with a message', async () => {
      const run = await runChapter(chapter, { args: ['-p', 'loop'], respond: () => reply(toolUse('bash', { command: 'true' })) });
      const bound = run.stderr.match(/stopped after (\d+) rounds/);
      expect(bound, 'after too many rounds the loop must stop and say "stopped after N rounds"').not.toBeNull();
      expect(run.requests.length, 'exactly N model calls were made').toBe(Number(bound![1]));
      expect(run.code, '-p without a final answer is a failure a script can see: exit 1').toBe(1);
    });

    plumbingIt('prints one readable line and exits 1 on a 401', async () => {
      const run = await runChapter(chapter, { args: ['-p', 'x'], replies: [httpError(401, 'invalid x-api-key')] });
      expect(run.code, 'an API failure in -p mode exits 1').toBe(1);
      expect(run.stderr, 'the API’s own message').toContain('invalid x-api-key');
      expect(run.stderr, 'a hint about the key').toContain('ANTHROPIC_API_KEY');
      expect(run.stderr, 'no stack trace for an expected failure').not.toMatch(/\n\s+at /);
    });

    plumbingIt('lets the SDK retry a 529 and completes', async () => {
      const run = await retried();
      expect(run.code).toBe(0);
      expect(run.requests.map((r) => r.injected?.status ?? 200), 'the SDK retries 529 by itself').toEqual([529, 200]);
      expect(run.stdout).toContain('recovered after retry');
      expect(run.stderr, 'the reader sees that it waits, and for how long').toMatch(/529.*wait 0\.01 s/);
    });

    plumbingIt('does not sit silent when a 429 asks to wait a day: a clear error at once', async () => {
      const run = await runChapter(chapter, {
        args: ['-p', 'x'],
        replies: [httpError(429, 'Number of requests has exceeded your rate limit', { 'retry-after': '86400' })],
        timeoutMs: 30_000, // "at once": long before the day it asked for
      });
      expect(run.code, 'an API failure in -p mode exits 1').toBe(1);
      expect(run.requests, 'no retry after a day-long retry-after').toHaveLength(1);
      expect(run.stderr, 'the API’s message and the wait it asked for').toMatch(/429: Number of requests[^\n]*86400 s/);
    });

    plumbingIt('names the URL it could not reach, and what to check', async () => {
      const run = await runChapter(chapter, { args: ['-p', 'x'], env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/could not reach http:\/\/127\.0\.0\.1:9.*ANTHROPIC_BASE_URL/);
    });

    plumbingIt('says it is waiting while a response is slow to begin, and gives up at the timeout', async () => {
      // API_TIMEOUT_SECONDS=2: a notice every half second. The answer begins once the first notice
      // is out (an event, not a time that a busy machine might overrun), well before the timeout.
      const env = { API_TIMEOUT_SECONDS: '2' };
      const notice = /waiting for the API: \d s; it gives up at 2 s/;
      let noticed = () => {};
      const seen = new Promise<void>((done) => (noticed = done));
      const waited = await runChapter(chapter, {
        args: ['-p', 'x'],
        env,
        onStderr: (stderr) => notice.test(stderr) && noticed(),
        respond: () => seen.then(() => reply(text('Here.'))),
      });
      expect(waited.stderr, 'the wait is not silent').toMatch(notice);
      expect(waited.code, waited.stderr).toBe(0);
      expect(waited.stdout).toContain('Here.');
      // The response never begins in time: three tries of 2 s (with the SDK's pauses), then one line.
      const never = () => new Promise<never>(() => {});
      const run = await runChapter(chapter, { args: ['-p', 'x'], env, respond: never, timeoutMs: 40_000 });
      expect(run.code, run.stderr).toBe(1);
      expect(run.requests, 'three tries').toHaveLength(3);
      expect(run.stderr).toMatch(/API error: no response from http:\/\/127\.0\.0\.1:\d+ within 2 s \(3 tries\)/);
    });

    plumbingIt('kills the running command when it is stopped by SIGTERM: nothing is left behind', async () => {
      // The command signals its own agent ($PPID is the chapter's process), then keeps running.
      const command = `${startJob()}; kill -TERM $PPID; sleep 30`;
      const run = await runChapter(chapter, { args: ['-p', 'x'], replies: [reply(toolUse('bash', { command }))] });
      expect(run.code, 'killed by SIGTERM: 128 + 15').toBe(143);
      expect(await jobsLeft(run.workspace), 'the command’s background job must have been killed too').toEqual([]);
    });

    if (ctrlC === 'exits') it.each(runners)('Ctrl+C in the REPL while a command runs ends the agent, the command, and a job an earlier turn left, under %s', async (_how, viaTsx) => {
      // Turn 1 leaves a job running in the background, its output sent elsewhere (as a dev server is
      // started); turn 2 runs a command that starts a job of its own, and gets a Ctrl+C.
      const command = `${startJob()}; sleep 30`;
      const run = await runRepl(chapter, ['start the server', 'start it', { after: /\$ \(sleep 30\) & echo/, keys: '\x03' }], {
        viaTsx,
        wrapper: watchGroup,
        replies: [reply(toolUse('bash', { command: startJob(true) })), reply(text('Started.')), reply(toolUse('bash', { command }))],
      });
      expect(run.code, 'interrupted: 128 + SIGINT (2)').toBe(130);
      expect(run.stdout, 'Ctrl+C is read as a key, not sent to tsx too').not.toContain(GROUP_SIGINT);
      const [started] = lastResults(run.requests[1].body);
      expect(started.content, 'the result of turn 1 names the group its job is in').toMatch(LEFT_RUNNING);
      expect(await jobsLeft(run.workspace), 'the command’s job and the one turn 1 left must be gone too').toEqual([]);
    });

    if (ctrlC === 'cancels the turn') it.each(pressRuns)('Ctrl+C in the REPL while a command runs ends the command and the turn, not the agent, %s times in a row, under %s', async (presses, _how, viaTsx) => {
      // Each pressed turn starts `(sleep 30) & …; sleep 30` and gets a Ctrl+C (helpers/ctrl-c.ts).
      // Were Ctrl+C a signal from the terminal, tsx would get it too, pass it on when the agent was
      // slow to acknowledge it (so one press came twice: at the prompt it quit, in the next turn it
      // cancelled that), and kill the agent when slower still. The REPL reads Ctrl+C as a key
      // instead (shared/cli.ts), so under tsx as under node every press must cancel its own turn
      // and nothing else, on the first run.
      // Around the presses, a job left running in the background: turn 1 starts one (its output sent
      // elsewhere, as a dev server is started), the first press must kill it with its turn's command,
      // and after "and now?" a last turn looks (its pid is the first line of jobs.pid) and leaves
      // another, which the exit must kill.
      const look = 'ps -o stat= -p "$(head -1 jobs.pid)" | grep -qv Z && echo running || echo gone';
      const respond = (body: any) => {
        const last = JSON.stringify(body.messages.at(-1));
        if (/turn t\d+x/.test(last)) return respondToPresses(body);
        if (last.includes('tool_result')) return reply(text('Noted.'));
        if (last.includes('start the server')) return reply(toolUse('bash', { command: startJob(true) }));
        if (last.includes('look at the server')) return reply(toolUse('bash', { command: `${look}; ${startJob(true)}` }));
        return respondToPresses(body); // "and now?"
      };
      const inputs = ['start the server', ...pressInputs(presses)];
      inputs.splice(-1, 0, 'look at the server'); // before "exit"
      const run = await runRepl(chapter, inputs, { viaTsx, wrapper: watchGroup, respond });
      expect(run.stdout, 'Ctrl+C is read as a key, not sent to tsx too').not.toContain(GROUP_SIGINT);
      const tally = tallyPresses(run, presses);
      const seen = `exit code ${run.code}; output:\n${run.stdout.slice(-3000)}`;
      expect(tally, `each press cancels its turn, and nothing else; ${seen}`).toEqual({
        presses,
        'turn only': presses,
        'also quit': 0,
        'also the next turn': 0,
        'killed in the turn': 0,
        other: 0,
      });
      expect(run.code, 'the agent leaves on "exit"').toBe(0);
      const asked = run.requests.map((q) => promptOf(q.body.messages.at(-1)));
      const pressed = asked.filter((p) => /^turn t\d+x$/.test(p));
      expect(pressed, 'one request a pressed turn: nothing is sent after a Ctrl+C').toHaveLength(presses);
      expect(run.requests, 'and two for each of the other three turns (a call, then its result)').toHaveLength(presses + 5);
      // The strict fake accepted every request: every tool_use has its result.
      const next = run.requests[asked.indexOf('and now?')].body.messages;
      const notes = JSON.stringify(next).split('[interrupted by the user]').length - 1;
      expect(notes, 'the model is told of each interrupted turn, once').toBe(presses);
      expect(run.stdout, 'the answer to the next prompt arrives').toContain('Still here.');
      const [started] = lastResults(run.requests[1].body);
      expect(started.content, 'the result of turn 1 names the group its job is in').toMatch(LEFT_RUNNING);
      const [looked] = lastResults(run.requests.at(-1)!.body);
      expect(looked.content, 'the first press killed the job turn 1 left').toMatch(/^gone/);
      expect(looked.content, 'the last turn left one more').toMatch(LEFT_RUNNING);
      expect(await jobsLeft(run.workspace), 'the commands’ jobs must be gone too, and the last turn’s after exit').toEqual([]);
    });

    plumbingIt('keeps what is typed during a turn for the next prompt; Up recalls the prompt before', async () => {
      const run = await runRepl(chapter, ['first', { after: /\$ sleep 1/, keys: 'second\r' }, '\x1b[A', 'exit'], {
        replies: [reply(toolUse('bash', { command: 'sleep 1' })), reply(text('one')), reply(text('two')), reply(text('three'))],
      });
      expect(run.code, run.stdout).toBe(0);
      const prompts = run.requests.map((request) => request.body.messages.filter((m: any) => m.role === 'user'));
      const typed = prompts.at(-1)!.map(promptOf).filter((p: string) => !p.startsWith('['));
      expect(typed.filter(Boolean), 'typed ahead, then Up and Enter').toEqual(['first', 'second', 'second']);
    });

    plumbingIt('ends quietly when stdout is closed (`-p … | head -1`), and runs nothing more', async () => {
      const run = await runChapter(chapter, {
        args: ['-p', 'x'],
        closeStdoutAfter: 1,
        replies: [
          // The command ends once the reader has gone (runChapter writes ../stdout-closed then).
          reply(text('first line'), toolUse('bash', { command: 'until [ -e ../stdout-closed ]; do sleep 0.05; done' })),
          { content: [text('second line'), toolUse('bash', { command: 'touch after-close' })], eventDelayMs: 20 },
          reply(text('done')),
        ],
      });
      expect(run.stderr, 'no stack trace').not.toMatch(/EPIPE|\n\s+at /);
      expect(run.code, 'the reader chose to stop reading: not a failure').toBe(0);
      expect(existsSync(join(run.workspace, 'after-close')), 'no tool call runs once nobody reads the output').toBe(false);
    });

    it('-h lists everything the chapter takes: its REPL commands and the environment it reads', async () => {
      // What the chapter's files (and the shared runtime they use) read: process.env.X, query === '/x'.
      const folder = join(REPO, readdirSync(REPO).find((name) => name.startsWith(`${chapter}_`))!);
      const files = readdirSync(folder).filter((name) => name.endsWith('.ts')).map((name) => join(folder, name));
      const runtime = ['client.ts', 'stream.ts', 'terminal.ts', 'cli.ts'].map((name) => join(REPO, 'shared', name));
      const source = [...files, ...runtime].map((file) => readFileSync(file, 'utf8')).join('\n');
      const names = (pattern: RegExp) => [...new Set([...source.matchAll(pattern)].map((m) => m[1]))];
      const taken = [...names(/process\.env\.(\w+)/g), ...names(/query === '(\/\w+)'/g), 'exit', 'quit', 'Ctrl+D'];
      const help = await runChapter(chapter, { args: ['-h'] });
      expect(help.code).toBe(0);
      for (const name of taken) expect(help.stdout, `-h must name ${name} (USAGE in code.ts, or shared/cli.ts)`).toContain(name);
      // The options are one list: --trace (every chapter's, from shared/cli.ts) is the last of them.
      const lines = help.stdout.split('\n');
      const lastOption = lines.findLastIndex((line) => /^ {2}-/.test(line));
      expect(lines[lastOption], 'the options end with --trace, before the exit codes').toMatch(/^ {2}--trace/);
      expect(lines.slice(0, lastOption).some((line) => line.startsWith('Exit codes')), 'no exit codes amid the options').toBe(false);
    });

    plumbingIt('prints usage for --help, and refuses an unknown flag or a missing prompt with exit 2', async () => {
      const [help, unknown, missing] = await Promise.all([
        runChapter(chapter, { args: ['--help'] }),
        runChapter(chapter, { args: ['--frobnicate'] }),
        runChapter(chapter, { args: ['-p'], offline: true }),
      ]);
      expect(help.code, '--help is not an error').toBe(0);
      expect(help.stdout).toMatch(/^Usage: npx tsx s\d\d_\w+\/code\.ts/);
      expect(help.requests, '--help does not start the REPL or call the model').toHaveLength(0);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/Unknown option '--frobnicate'[\s\S]*Usage:/);
      expect(missing.code).toBe(2);
      expect(missing.stderr, 'the error comes first, not after the offline banner').not.toContain('offline demo');
    });

    plumbingIt('treats empty keys (ANTHROPIC_API_KEY= and ANTHROPIC_AUTH_TOKEN=) as none: the offline model answers', async () => {
      const env = { ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' };
      const run = await runChapter(chapter, { args: ['-p', 'run echo empty-key-ok'], offline: true, env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('empty-key-ok');
    });

    it(`without a key, answers through the offline demo model and says so (${offlineUnder})`, async () => {
      const run = await runRepl(chapter, ['run echo offline-ok', 'quit'], { offline: true, viaTsx: offlineViaTsx });
      expect(run.code, run.stdout).toBe(0);
      expect(run.stdout, 'the banner must say plainly that this is not an AI').toMatch(/offline demo[\s\S]*not an AI/);
      expect(run.stdout, 'the offline model turns "run …" into a bash call').toContain('$ echo offline-ok');
      expect(run.stdout.split('offline-ok').length, 'and quotes the result back').toBeGreaterThan(2);
      expect(run.stdout, '"quit" leaves; it is not sent to the model').not.toMatch(/did not understand "quit"/);
      const listed = [...run.stdout.matchAll(/^│ {3}(\w+)/gm)].map((m) => m[1]).filter((word) => word !== 'join');
      expect(listed, 'the banner lists exactly the commands this chapter’s tools can do').toEqual(offlineCommands);
      const rounds = run.stdout.match(/^\[round .*$/gm) ?? [];
      if (options.offlineRoundLine) expect(rounds, 'round lines').not.toHaveLength(0);
      for (const line of options.offlineRoundLine ? rounds : []) expect(line).toMatch(options.offlineRoundLine!);
    });
  });
}
