/**
 * Preloaded into every bundle run of a chapter (`node --import=<this> bundle.mjs`, run-chapter.ts):
 * V8's `--liftoff-only`, set once node's own modules that a chapter uses are loaded.
 *
 * Why: node's fetch parses HTTP with a WebAssembly module (undici's llhttp), which V8 recompiles
 * with its optimising compiler on a background thread that node waits for before it exits: about
 * 0.05 CPU-s a run, for code that has finished. `--liftoff-only` keeps the baseline compiler's code.
 * Given on the command line, though, the flag also makes V8 refuse the code cache node ships for its
 * own modules (it was made under the default flags), and node compiles http, child_process, undici
 * and the rest afresh: 0.03 CPU-s a run. Loaded first, they come from that cache; the flag, set
 * after, still reaches the WebAssembly, which is compiled at the first request.
 * (npm run bench:suite: 0.195 CPU-s a run this way, 0.225 with the flag, 0.28 with neither.)
 */
import 'node:http';
import 'node:https';
import 'node:child_process';
import 'node:readline';
import 'node:stream';
import 'node:crypto';
import 'node:fs/promises';
import v8 from 'node:v8';

void globalThis.fetch; // a getter that loads undici
void globalThis.Headers;
void globalThis.TextDecoderStream;
v8.setFlagsFromString('--liftoff-only');
