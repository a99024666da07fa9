/**
 * What every chapter's agent loop must do, from s01 on. Each chapter's test file calls
 * `loopBehaviours('sNN')`, so a later chapter that breaks the loop fails the same checks s01 passes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpError, reply, text, toolUse, type MessageReply } from '../../shared/fake-anthropic.ts';
import { REPO, TEST_KEY, runChapter, runRepl, toolResults as lastResults } from '../helpers/run-chapter.ts';
import { shared } from '../helpers/shared.ts';

export function loopBehaviours(chapter: string) {
  describe.concurrent(`${chapter}: one tool round`, () => {
    // The first reply opens with a whitespace-only text block, as real models sometimes do.
    const r = shared(() =>
      runChapter(chapter, {
        args: ['-p', 'say hello'],
        replies: [reply(text('\n\n'), toolUse('bash', { command: 'echo "hello from bash"' }, 'toolu_A')), reply(text('All done.'))],
      }),
    );

    it('runs a bash tool call and sends its output back as a tool_result with the same id', () => {
      const run = r();
      expect(run.code, `the run should exit 0; stderr was:\n${run.stderr}`).toBe(0);
      expect(run.requests, 'one call for the tool_use, one more with its result').toHaveLength(2);
      const [result] = lastResults(run.requests[1].body);
      expect(result, 'after a tool_use the loop must send a tool_result answering the same id').toMatchObject({ tool_use_id: 'toolu_A' });
      expect(JSON.stringify(result.content), 'the tool_result must carry what the command printed').toContain('hello from bash');
      expect(run.stdout, 'each tool call is shown to the reader as "$ <command>"').toContain('$ echo "hello from bash"');
      expect(run.stdout, 'the final answer is printed').toContain('All done.');
    });

    it('prints a usage line with the input tokens after every model call', () => {
      const run = r();
      const shown = [...run.stdout.matchAll(/tokens in (\d+)/g)].map((m) => Number(m[1]));
      expect(shown, 'one "tokens in N" line per call, with the API-reported numbers').toEqual(run.requests.map((q) => q.inputTokens));
      expect(shown[1], 'the second call sends the whole conversation again, so its input is larger').toBeGreaterThan(shown[0]);
    });

    it('with a custom base URL, sends the key as a Bearer token and as x-api-key (vendors read only that)', () => {
      const { headers } = r().requests[0];
      expect(headers['authorization'], 'SDK 1.x authenticates with Bearer').toBe(`Bearer ${TEST_KEY}`);
      expect(headers['x-api-key'], 'Anthropic-compatible vendors such as DeepSeek read x-api-key').toBe(TEST_KEY);
    });

    it('drops a whitespace-only text block before sending the reply back (the API refuses it)', () => {
      // runChapter fails by itself if the fake refused the second request.
      expect(r().requests[1].body.messages[1].content, 'only the tool_use is kept').toHaveLength(1);
    });
  });

  describe.concurrent(`${chapter}: several tool calls in one reply`, () => {
    const r = shared(() =>
      runChapter(chapter, {
        args: ['-p', 'several things'],
        replies: [
          reply(
            toolUse('bash', { command: 'echo first' }, 'toolu_1'),
            toolUse('bash', { command: 'echo second' }, 'toolu_2'),
            toolUse('bash', {}, 'toolu_bad'),
            toolUse('bash', { command: 'seq 1 200000' }, 'toolu_big'),
          ),
          reply(text('recovered')),
        ],
      }),
    );
    const results = () => lastResults(r().requests[1].body);

    it('answers all of them in order, in a single user message', () => {
      expect(r().code, r().stderr).toBe(0);
      expect(results().map((x: any) => x.tool_use_id), 'every result, in the order of the calls, in ONE message').toEqual(['toolu_1', 'toolu_2', 'toolu_bad', 'toolu_big']);
      expect(JSON.stringify(results()[0].content)).toContain('first');
      expect(JSON.stringify(results()[1].content)).toContain('second');
    });

    it('answers a call without its required input with an is_error result, and goes on', () => {
      expect(results()[2], 'a malformed tool input is the model’s mistake: tell it, with is_error').toMatchObject({ is_error: true });
      expect(JSON.stringify(results()[2].content)).toContain('command');
      expect(r().stdout).toContain('recovered');
    });

    it('caps huge command output, keeping its head and tail', () => {
      const content = JSON.stringify(results()[3].content);
      expect(content.length, 'about 1.3 MB of numbers must not go to the model whole').toBeLessThan(40_000);
      expect(content, 'the head survives').toMatch(/^"1\\n2\\n3/);
      expect(content, 'the tail survives').toContain('199999');
    });
  });

  describe.concurrent(`${chapter}: a REPL session`, () => {
    // One conversation, five prompts, each scripted to test one rule:
    //   1 text only · 2 an API error · 3 a refusal · 4 a reply cut off at max_tokens · 5 a normal answer
    const r = shared(() =>
      runRepl(chapter, ['first question', 'second question', 'third question', 'make a file', 'fifth question', 'exit'], {
        env: { MODEL_ID: '' }, // unset: the chapter must fall back to the default .env.example documents
        replies: [
          reply(text('answer one')),
          httpError(400, 'something was wrong'),
          { content: [text('I cannot help with that.')], stop_reason: 'refusal' },
          { content: [text('I will create it'), toolUse('bash', { command: 'touch should-not-exist' })], stop_reason: 'max_tokens' },
          reply(text('answer five')),
        ],
      }),
    );
    /** The request sent for the n-th prompt (1-based): each prompt here makes exactly one call. */
    const request = (n: number) => r().requests[n - 1].body;

    it('quits on exit', () => {
      expect(r().timedOut, `the REPL should quit on "exit"; output:\n${r().stdout}`).toBe(false);
      expect(r().code).toBe(0);
    });

    it('ends the turn when the reply calls no tool', () => {
      expect(r().requests, 'one model call per prompt: a text-only reply must not trigger another').toHaveLength(5);
      expect(r().stdout).toContain('answer one');
    });

    it('uses the default model that .env.example names when MODEL_ID is unset', () => {
      const documented = readFileSync(join(REPO, '.env.example'), 'utf8').match(/^MODEL_ID=(\S+)/m)?.[1];
      expect(request(1).model).toBe(documented);
    });

    it('keeps history across prompts and survives an API error', () => {
      expect(r().stdout, 'the error is shown, and the REPL goes on').toContain('something was wrong');
      const later = request(3).messages;
      expect(later[0], 'the first prompt is still there').toMatchObject({ role: 'user', content: 'first question' });
      expect(later[1], 'followed by the model’s answer').toMatchObject({ role: 'assistant' });
      expect(JSON.stringify(later.slice(2)), 'the prompt whose call failed is kept, and the next one too').toMatch(/second question[\s\S]*third question/);
    });

    it('reports a refusal instead of silently stopping', () => {
      expect(r().stdout).toMatch(/declined|refus/i);
    });

    it('does not run a tool call from a reply cut off at max_tokens, and says so', () => {
      expect(existsSync(join(r().workspace, 'should-not-exist')), 'a cut-off tool call may have half its input: never run it').toBe(false);
      expect(r().stdout, 'the reader should see that the reply was cut').toMatch(/max_tokens/);
    });

    it('keeps the conversation valid after a cut-off reply (the next prompt is not refused)', () => {
      // runRepl fails by itself if the fake refused a request (a dangling tool_use, say).
      expect(JSON.stringify(request(5).messages), 'no tool_use is left without its result').not.toContain('should-not-exist');
      expect(r().stdout).toContain('answer five');
    });
  });

  describe.concurrent(`${chapter}: the agent loop`, () => {
    it('streams: text is printed as it arrives, before the reply is complete', async () => {
      // The stream fails after the first block. A loop that waits for the whole reply before printing shows nothing.
      const broken: MessageReply = { content: [text('Partial answer that was streamed'), text('never sent')], errorAfterBlocks: 1 };
      const run = await runChapter(chapter, { args: ['-p', 'stream please'], replies: [broken] });
      expect(run.requests[0].body.stream, 'the request must ask for a stream (client.messages.stream)').toBe(true);
      expect(run.stdout, 'text deltas should be written to stdout as they arrive').toContain('Partial answer that was streamed');
      expect(run.code, 'a stream that fails is an API error: exit 1').toBe(1);
    });

    it('stops a runaway loop at its round bound with a message', async () => {
      const run = await runChapter(chapter, { args: ['-p', 'loop'], respond: () => reply(toolUse('bash', { command: 'true' })) });
      const bound = run.stdout.match(/stopped after (\d+) rounds/);
      expect(bound, 'after too many rounds the loop must stop and say "stopped after N rounds"').not.toBeNull();
      expect(run.requests.length, 'exactly N model calls were made').toBe(Number(bound![1]));
      expect(run.code).toBe(0);
    });

    it('prints one readable line and exits 1 on a 401', async () => {
      const run = await runChapter(chapter, { args: ['-p', 'x'], replies: [httpError(401, 'invalid x-api-key')] });
      expect(run.code, 'an API failure in -p mode exits 1').toBe(1);
      expect(run.stderr, 'the API’s own message').toContain('invalid x-api-key');
      expect(run.stderr, 'a hint about the key').toContain('ANTHROPIC_API_KEY');
      expect(run.stderr, 'no stack trace for an expected failure').not.toMatch(/\n\s+at /);
    });

    it('lets the SDK retry a 529 and completes', async () => {
      const run = await runChapter(chapter, {
        args: ['-p', 'x'],
        replies: [httpError(529, 'Overloaded', { 'retry-after-ms': '10' }), reply(text('recovered after retry'))],
      });
      expect(run.code).toBe(0);
      expect(run.requests.map((r) => r.injected?.status ?? 200), 'the SDK retries 529 by itself').toEqual([529, 200]);
      expect(run.stdout).toContain('recovered after retry');
    });

    it('without a key, answers through the offline demo model and says so', async () => {
      const run = await runChapter(chapter, { offline: true, args: ['-p', 'run echo offline-ok'] });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout, 'the banner must say plainly that this is not an AI').toMatch(/offline demo[\s\S]*not an AI/);
      expect(run.stdout, 'the offline model turns "run …" into a bash call').toContain('$ echo offline-ok');
      expect(run.stdout.split('offline-ok').length, 'and quotes the result back').toBeGreaterThan(2);
    });
  });
}
