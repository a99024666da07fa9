/**
 * How `npm test` shows the tests: node's TAP, less what changes from run to run, from one Node to
 * the next and from one folder to another (timings, node's own stack frames, absolute paths).
 * Node 20 and Node 24 print the same lines here, byte for byte; node's own reporters do not.
 *
 *   ok 3 - gives no bulk discount below 10 items
 *   not ok 4 - gives the bulk discount from 10 items
 *     ---
 *     location: 'test/discounts.test.js:21:1'
 *     error: |-
 *       Expected values to be strictly equal:
 *       10000 !== 9000
 *     expected: 9000
 *     actual: 10000
 *     ...
 *   # tests 52      and the rest of node's summary, without its duration_ms
 */
import { inspect } from 'node:util';

const here = `${process.cwd()}/`;
const local = (path) => (path.startsWith(here) ? path.slice(here.length) : path);
const indent = (nesting) => '    '.repeat(nesting);
// A name or a value on one line, as TAP wants it.
const oneLine = (text) => text.replace(/\\/g, '\\\\').replace(/\r?\n/g, '\\n').replace(/#/g, '\\#');
const quoted = (text) => `'${text.replace(/'/g, "''")}'`;
const shown = (value) => inspect(value, { breakLength: Infinity, depth: 4 });

/** The lines of a failure's block: where, what failed, and the values compared. */
function details(data) {
  const lines = [`location: ${quoted(`${local(data.file ?? '?')}:${data.line}:${data.column}`)}`];
  let error = data.details?.error;
  // A failing assertion comes wrapped in node's ERR_TEST_FAILURE: what it says is the cause.
  if (error?.code === 'ERR_TEST_FAILURE' && error.cause && typeof error.cause === 'object') {
    error = error.cause;
  }
  const message = String(error?.message ?? error ?? 'test failed').split('\n');
  const said = message.map((line) => line.trimEnd()).filter((line) => line !== '');
  lines.push('error: |-', ...said.map((line) => `  ${line}`));
  if (error && typeof error === 'object') {
    if ('expected' in error) lines.push(`expected: ${shown(error.expected)}`);
    if ('actual' in error) lines.push(`actual: ${shown(error.actual)}`);
    const exit = data.details.error;
    // A test file that exited or did not load: how it ended.
    if (exit.exitCode != null) lines.push(`exitCode: ${exit.exitCode}`);
    if (exit.signal) lines.push(`signal: ${exit.signal}`);
  }
  return ['---', ...lines, '...'];
}

// ` # SKIP why`, for a test skipped (or marked todo), with its reason if it has one.
function directive(word, reason) {
  if (reason === undefined || reason === false) return '';
  return reason === true ? ` # ${word}` : ` # ${word} ${reason}`;
}

export default async function* reporter(source) {
  yield 'TAP version 13\n';
  for await (const { type, data } of source) {
    const pad = indent(data.nesting ?? 0);
    if (type === 'test:pass' || type === 'test:fail') {
      const ok = type === 'test:pass' ? 'ok' : 'not ok';
      const name = oneLine(local(data.name));
      yield `${pad}${ok} ${data.testNumber} - ${name}${directive('SKIP', data.skip)}`;
      yield `${directive('TODO', data.todo)}\n`;
      if (type === 'test:fail') yield details(data).map((line) => `${pad}  ${line}\n`).join('');
    } else if (type === 'test:plan') {
      yield `${pad}1..${data.count}\n`;
    } else if (type === 'test:diagnostic' && !data.message.startsWith('duration_ms ')) {
      yield `${pad}# ${data.message}\n`;
    } else if (type === 'test:stdout' || type === 'test:stderr') {
      // What a test file printed: a file that did not load says why here.
      const lines = data.message.replace(/\n$/, '').split('\n');
      yield lines.map((line) => `# ${line}\n`).join('');
    }
  }
}
