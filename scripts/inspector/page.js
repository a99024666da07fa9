// The inspector page's script (scripts/inspector/page.ts inlines it; plain browser JavaScript,
// no build step). It draws a request when its line in the list is opened, from the JSON data
// island: drawing all of them up front would make a long run's page slow to open.
//
// Every text from the trace (the model's, a tool's, a file's) goes into the page with
// textContent, never as HTML: a tool output holding a script tag is shown, not run. And every
// value is made text with textOf, never String() or `${…}`: both throw on {"toString":1}, which
// a faulty endpoint can send as a block's type.
'use strict';

(() => {
  const FOLD_CHARS = 1500; // a longer text shows its start and a "show all" button
  const FOLD_LINES = 12;
  const state = { data: null, rows: new Map() }; // the island, parsed when first needed

  function data() {
    if (!state.data) {
      state.data = JSON.parse(document.getElementById('trace-data').textContent);
      for (const row of state.data.rows) {
        // { shared: [6, 170] }: the list starts with the first 170 messages of request 6's,
        // all of them sent again as they were.
        if (row.shared) {
          const [n, same] = row.shared;
          row.messages = state.rows.get(n).messages.slice(0, same).concat(row.messages);
          row.marks = 'r'.repeat(same) + row.marks;
        }
        state.rows.set(row.n, row);
      }
    }
    return state.data;
  }
  const valueOf = (id) => data().values[id];

  // ── Small builders ─────────────────────────────────────────────────────────────────────────

  /** Any value as text: a string as it is, an object as its JSON. */
  function textOf(value) {
    if (typeof value === 'string') return value;
    if (value !== null && typeof value === 'object') return JSON.stringify(value);
    return String(value);
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = textOf(text);
    return node;
  }
  const number = (n) => Number(n || 0).toLocaleString('en-US');
  const tokens = (chars) => Math.ceil(chars / 4); // ≈ 4 characters a token
  const size = (chars) => `${number(chars)} characters (≈${number(tokens(chars))} tokens)`;
  /** `1 section`, `5 sections` */
  const plural = (n, one, many = `${one}s`) => `${number(n)} ${n === 1 ? one : many}`;
  const seconds = (ms) => (ms === null || ms === undefined || Number.isNaN(ms) ? '—'
    : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`);
  const dollars = (value) => (value === undefined || value === null ? '—'
    : `$${value < 1 ? value.toFixed(4) : value.toFixed(2)}`);

  /** A link to another request of the list: `#r7`, made from a number only. */
  function link(n) {
    const a = el('a', '', `#${Number(n)}`);
    a.href = `#r${Number(n)}`;
    return a;
  }

  /** The first `limit` characters, never cutting a surrogate pair in two. */
  function head(text, limit) {
    const cut = text.slice(0, limit);
    const last = cut.charCodeAt(cut.length - 1);
    return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
  }

  /** A text in a <pre>; a long one folded to its start, with a button to show it all. */
  function folded(text, className) {
    const pre = el('pre', className);
    const lines = text.split('\n');
    if (text.length <= FOLD_CHARS && lines.length <= FOLD_LINES) {
      pre.textContent = text;
      return pre;
    }
    const start = `${head(lines.slice(0, FOLD_LINES).join('\n'), FOLD_CHARS)}\n…`;
    const more = `show all (${number(text.length)} characters, ${number(lines.length)} lines)`;
    const button = el('button', 'fold', more);
    button.type = 'button';
    pre.textContent = start;
    button.addEventListener('click', () => {
      const all = pre.textContent === start;
      pre.textContent = all ? text : start;
      button.textContent = all ? 'show less' : more;
    });
    const box = el('div', 'folded');
    box.append(pre, button);
    return box;
  }

  /** A <details> whose body is made only when it is first opened. */
  function lazy(className, title, makeBody) {
    const details = el('details', className);
    const summary = el('summary');
    summary.append(...title);
    details.append(summary);
    details.addEventListener('toggle', () => {
      if (!details.open || details.dataset.made) return;
      details.dataset.made = '1';
      details.append(makeBody());
    });
    return details;
  }

  // ── A request ──────────────────────────────────────────────────────────────────────────────

  /** The same agent's request before this one in the same run, to say what changed. */
  function previousOf(row) {
    let before;
    for (const other of data().rows) {
      if (other.n >= row.n) break;
      if (other.run === row.run && other.agent === row.agent && other.isRequest) before = other;
    }
    return before;
  }

  function renderRow(row) {
    const out = document.createDocumentFragment();
    out.append(meta(row));
    const failed = failure(row);
    if (failed) out.append(failed);
    out.append(...numbers(row));
    if (!row.isRequest || !row.messages) {
      const response = JSON.stringify(row.response, null, 2) ?? 'none';
      out.append(el('h3', 'part', 'Response'), folded(response));
      return out;
    }
    const previous = previousOf(row);
    if (row.system !== undefined) out.append(systemPart(row, previous));
    if (row.tools !== undefined) out.append(toolsPart(row, previous));
    out.append(messagesPart(row, previous), replyPart(row));
    return out;
  }

  /** `agent main · model claude-sonnet-5-5 · max_tokens 8000 · stream true` */
  function meta(row) {
    const p = el('p', 'meta');
    const params = row.params || {};
    const facts = [
      ['run', data().runs > 1 ? `${row.run + 1} of ${data().runs}, its exchange ${row.inRun}`
        : undefined],
      ['agent', row.agent],
      ['model', params.model],
      ['max_tokens', params.max_tokens],
      ['thinking', params.thinking && JSON.stringify(params.thinking)],
      ['stream', params.stream === undefined ? undefined : textOf(params.stream)],
    ];
    const shown = [];
    for (const [name, value] of facts) {
      if (value === undefined || value === null) continue;
      shown.push([`${name} `, el('b', '', value)]);
    }
    if (!row.isRequest) shown.push([el('b', '', `${row.method} ${row.path}`)]);
    if (row.retryOf) shown.push([`try ${row.try}, a retry of `, link(row.retryOf)]);
    shown.forEach((parts, i) => p.append(...(i ? [' · '] : []), ...parts));
    return p;
  }

  /** An error status, or a reply that never completed; and the retry that followed, if any. */
  function failure(row) {
    const body = row.response || {};
    const apiError = body.error && typeof body.error === 'object' ? body.error : undefined;
    if (!(row.status >= 400) && !row.error) return undefined;
    const box = el('div', row.interrupted ? 'failure-box interrupted' : 'failure-box');
    if (row.status >= 400) {
      const type = textOf(apiError?.type || 'error');
      const what = apiError ? `${type}: ${textOf(apiError.message || '')}` : '';
      box.append(el('div', 'error', `HTTP ${row.status} ${what}`));
    }
    if (row.interrupted) box.append(el('div', '', `interrupted: ${row.error}`));
    else if (row.error) box.append(el('div', 'error', `no complete reply: ${row.error}`));
    if (row.retryAfter) box.append(el('div', '', `the API asked to wait ${row.retryAfter} s`));
    if (row.retriedAs) {
      const retry = el('div', '', 'the SDK sent it again as ');
      retry.append(link(row.retriedAs));
      box.append(retry);
    }
    return box;
  }

  /**
   * Two lines: `input 3,575 tokens (0 read from the cache, …) · output 115 tokens · estimated cost
   * $0.0083 at list prices`
   * and `sent 2026-11-24 10:00:01.480 UTC · first byte after 40 ms · complete after 80 ms`.
   */
  function numbers(row) {
    const lines = [];
    const u = row.usage;
    if (u) {
      const p = el('p', 'numbers');
      p.append('input ', el('b', '', `${number(u.read + u.written + u.uncached)} tokens`),
        ` (${number(u.read)} read from the cache, ${number(u.written)} written to it, ` +
        `${number(u.uncached)} uncached) · output `, el('b', '', `${number(u.output)} tokens`));
      // The offline demo model is no model: nothing to price.
      if (row.offline) p.append(' · no cost: the offline demo model answered');
      else p.append(' · estimated cost ', el('b', '', dollars(row.cost)), ' at list prices');
      lines.push(p);
    }
    const t = row.times;
    const sent = new Date(t.sent);
    const times = [];
    if (!Number.isNaN(sent.getTime())) {
      times.push(['sent', sent.toISOString().replace('T', ' ').replace('Z', ' UTC')]);
    }
    times.push(['first byte after', seconds(t.firstByte === null ? null : t.firstByte - t.sent)]);
    times.push(['complete after', seconds(t.done === null ? null : t.done - t.sent)]);
    const p = el('p', 'numbers');
    times.forEach(([name, value], i) => p.append(i ? ' · ' : '', `${name} `, el('b', '', value)));
    lines.push(p);
    return lines;
  }

  // ── The system prompt, by section ──────────────────────────────────────────────────────────

  /** s06 sends one text block a section ("# Title\n…"); earlier chapters, one string. */
  function sectionsOf(system) {
    if (typeof system === 'string') return [{ text: system, whole: true }];
    if (!Array.isArray(system)) return [{ text: JSON.stringify(system) }];
    return system.map((block) => ({ text: textOf(block?.text ?? ''),
      breakpoint: block?.cache_control }));
  }

  function sameAsBefore(row, previous, key) {
    if (!previous) return '';
    const same = previous[key] === row[key];
    return same ? ` · as in #${previous.n}` : ` · changed since #${previous.n}`;
  }

  function systemPart(row, previous) {
    const sections = sectionsOf(valueOf(row.system));
    const chars = sections.reduce((sum, s) => sum + s.text.length, 0);
    const breakpoints = sections.filter((s) => s.breakpoint).length;
    const shape = sections[0]?.whole ? 'one string' : plural(sections.length, 'section');
    const atEnd = breakpoints === 1 && sections.at(-1).breakpoint;
    const marked = atEnd ? ' · a cache breakpoint at its end'
      : breakpoints ? ` · ${plural(breakpoints, 'cache breakpoint')}` : '';
    const title = [el('span', '', 'System prompt: '), el('span', 'size',
      `${shape}, ${size(chars)}${marked}${sameAsBefore(row, previous, 'system')}`)];
    return lazy('part system', title, () => {
      if (sections[0]?.whole) return folded(sections[0].text);
      const body = el('div');
      for (const section of sections) {
        const name = /^# (.+)/.exec(section.text)?.[1] ?? section.text.split('\n')[0].slice(0, 60);
        const heading = [el('span', '', `${name} `), el('span', 'size', size(section.text.length))];
        if (section.breakpoint) heading.push(el('span', 'breakpoint', ' · cache breakpoint'));
        const details = el('details', 'section');
        const summary = el('summary');
        summary.append(...heading);
        details.append(summary, folded(section.text));
        body.append(details);
      }
      return body;
    });
  }

  function toolsPart(row, previous) {
    const list = valueOf(row.tools);
    const isTool = (tool) => tool && typeof tool === 'object';
    const tools = Array.isArray(list) ? list.filter(isTool) : [];
    const chars = JSON.stringify(tools).length;
    const names = tools.map((tool) => textOf(tool.name)).join(', ');
    const title = [el('span', '', 'Tools: '), el('span', 'size', tools.length === 0 ? 'none'
      : `${names} · ${size(chars)}${sameAsBefore(row, previous, 'tools')}`)];
    return lazy('part tools', title, () => {
      const body = el('div', 'tool-list');
      for (const tool of tools) {
        const line = el('div', '', `${textOf(tool.name)} `);
        line.append(el('span', 'size', size(JSON.stringify(tool).length)));
        if (tool.cache_control) line.append(el('span', 'breakpoint', ' · cache breakpoint'));
        body.append(line, folded(JSON.stringify(tool, null, 2)));
      }
      return body;
    });
  }

  // ── The messages, new ones set apart from those sent again ─────────────────────────────────

  const STATES = { n: 'new', c: 'changed', r: 'resent' };
  const SUMMARY = '[Earlier conversation, compacted.';

  function blocksOf(message) {
    const content = message && typeof message === 'object' ? message.content : undefined;
    if (typeof content === 'string') return [{ type: 'text', text: content }];
    return Array.isArray(content) ? content : [];
  }
  const isSummary = (message) => message?.role === 'user' &&
    textOf(blocksOf(message)[0]?.text ?? '').startsWith(SUMMARY);

  function messagesPart(row, previous) {
    const part = el('div', 'part messages');
    const counts = { n: 0, c: 0, r: 0 };
    for (const mark of row.marks) counts[mark]++;
    // `9 sent: 7 resent, 2 new (against #4, …)`, or `1 sent, new (this agent's first request)`
    const split = [['r', 'resent'], ['c', 'changed'], ['n', 'new']]
      .filter(([mark]) => counts[mark]).map(([mark, name]) => `${counts[mark]} ${name}`);
    const sent = `${number(row.messages.length)} sent`;
    const heading = !previous ? `${sent}, ${counts.n === 1 ? '' : 'all '}new (this agent's ` +
      `first request${data().runs > 1 ? ' in this run' : ''})`
      : `${sent}: ${split.join(', ')} (against #${previous.n}, this agent's previous request)`;
    part.append(el('h3', '', `Messages: ${heading}`));
    // Tool names by id, so a result can say which call it answers.
    const calls = new Map();
    for (const id of row.messages) {
      for (const block of blocksOf(valueOf(id))) {
        if (block?.type === 'tool_use') calls.set(block.id, block.name);
      }
    }
    const breakpoints = new Set(row.breakpoints.map(([m, b]) => `${m}:${b}`));
    const draw = (i) => message(row, i, calls, breakpoints);
    // Runs of messages sent again unchanged fold into one line: they are the bulk of a request.
    for (let i = 0; i < row.messages.length;) {
      let end = i;
      while (row.marks[end] === 'r') end++;
      if (end - i >= 2) {
        const from = i;
        const title = [`messages ${from + 1}–${end}: ${end - from} sent again, unchanged`];
        part.append(lazy('resent-group', title, () => {
          const body = el('div');
          for (let k = from; k < end; k++) body.append(draw(k));
          return body;
        }));
        i = end;
      } else {
        part.append(draw(i));
        i++;
      }
    }
    return part;
  }

  function message(row, i, calls, breakpoints) {
    const sent = valueOf(row.messages[i]);
    const value = sent && typeof sent === 'object' ? sent : { role: '?', content: [sent] };
    const mark = row.marks[i];
    const box = el('div', `msg ${STATES[mark]}${isSummary(value) ? ' summary' : ''}`);
    const top = el('div', 'msg-head', `${i + 1}. ${textOf(value.role)}`);
    const why = row.why[i] ? `: ${row.why[i]}` : '';
    top.append(el('span', 'tag state', `${STATES[mark]}${why}`));
    if (isSummary(value)) top.append(el('span', 'tag kind', 'summary of the earlier conversation'));
    box.append(top);
    blocksOf(value).forEach((b, k) => {
      if (!isEmptyThinking(b)) box.append(block(b, { calls, sent: true }));
      if (breakpoints.has(`${i}:${k}`)) box.append(breakpointNote());
    });
    return box;
  }

  function breakpointNote() {
    return el('div', 'breakpoint', 'cache breakpoint (cache_control): everything up to here ' +
      'can be read from the cache by the next request');
  }

  // A thinking block with no text (a reply whose thinking is not shown, the offline model's
  // summary): no box, rather than an empty one.
  const isEmptyThinking = (b) =>
    b?.type === 'thinking' && textOf(b.thinking ?? '').trim() === '';

  const PLACEHOLDER = '[cleared to save context: the result of ';
  const KINDS = new Set(['text', 'thinking', 'redacted_thinking', 'tool_use', 'tool_result',
    'image', 'document']);

  /** One content block, as text. `sent`: in a request (else in the reply). */
  function block(value, options) {
    // Whatever a trace holds is drawn: a block that is not an object, too.
    const b = value && typeof value === 'object' ? value : { type: 'not a block', value };
    // A class for the kinds known here only: a type is text from the trace.
    const known = KINDS.has(b.type) ? b.type : 'other';
    const box = el('div', `block ${known}`);
    const top = el('div', 'block-head');
    box.append(top);
    const show = (text) => box.append(folded(textOf(text ?? '')));
    switch (b.type) {
      case 'text':
        top.textContent = 'text';
        show(b.text);
        break;
      case 'thinking':
        top.textContent = options.sent ? 'thinking (kept: sent back with its signature)'
          : 'thinking';
        show(b.thinking);
        break;
      case 'redacted_thinking':
        top.textContent = `redacted thinking (${number(textOf(b.data ?? '').length)} characters, ` +
          'encrypted)';
        break;
      case 'tool_use':
        top.textContent = `tool call: ${textOf(b.name)} (${textOf(b.id)})`;
        show(JSON.stringify(b.input, null, 2));
        break;
      case 'tool_result': {
        const content = b.content;
        const first = typeof content === 'string' ? content : content?.[0]?.text;
        const placeholder = textOf(first ?? '').startsWith(PLACEHOLDER);
        if (placeholder) box.classList.add('placeholder');
        if (b.is_error) box.classList.add('error');
        const name = options.calls?.get(b.tool_use_id) ?? 'a tool call';
        top.textContent = `${placeholder ? 'placeholder for the result' : 'result'} of ` +
          `${textOf(name)} (${textOf(b.tool_use_id)})${b.is_error ? ' · an error' : ''}`;
        if (Array.isArray(content)) for (const inner of content) box.append(block(inner, options));
        else show(typeof content === 'string' ? content : JSON.stringify(content));
        break;
      }
      case 'image':
      case 'document': {
        const source = b.source || {};
        top.textContent = `${b.type}: ${textOf(source.media_type ?? source.type ?? '?')}, ` +
          `${number(textOf(source.data ?? '').length)} characters; not shown`;
        break;
      }
      default:
        top.textContent = textOf(b.type);
        show(JSON.stringify(b, null, 2));
    }
    return box;
  }

  function replyPart(row) {
    const part = el('div', 'part reply');
    const reply = row.response;
    const content = reply && Array.isArray(reply.content) ? reply.content : undefined;
    const stop = content ? ` · stop: ${textOf(reply.stop_reason ?? 'none (cut off)')}` : '';
    part.append(el('h3', '', `Reply${row.error && content ? ' (as far as it got)' : ''}${stop}`));
    if (!content) {
      part.append(el('p', 'meta', row.status >= 400 ? 'an error: see above' : 'no reply'));
      return part;
    }
    for (const b of content) if (!isEmptyThinking(b)) part.append(block(b, { sent: false }));
    return part;
  }

  // ── Wiring: open a line, follow a link from the chart ──────────────────────────────────────

  function fill(details) {
    if (details.dataset.filled) return;
    details.dataset.filled = '1';
    data(); // the rows, by n, once the island is read
    const row = state.rows.get(Number(details.dataset.n));
    if (row) details.querySelector('.body').append(renderRow(row));
  }

  // toggle does not bubble: listen while it goes down instead.
  document.addEventListener('toggle', (event) => {
    const target = event.target;
    const request = target instanceof HTMLDetailsElement && target.classList.contains('request');
    if (request && target.open) fill(target);
  }, true);

  /** #r7 (a step of the chart, a link in a request): open that request and show it. */
  function openFromHash() {
    const id = location.hash.slice(1);
    if (!/^r\d+$/.test(id)) return;
    const details = document.getElementById(id);
    if (!details) return;
    fill(details);
    details.open = true;
    details.scrollIntoView({ block: 'start' });
  }
  window.addEventListener('hashchange', openFromHash);
  openFromHash();

  // Pointing at a step says what it holds, above the chart (its <title> says so too, slower).
  const info = document.getElementById('chart-info');
  document.addEventListener('mouseover', (event) => {
    const step = event.target instanceof Element ? event.target.closest('.step') : null;
    const title = step?.querySelector('title');
    if (info && title) info.textContent = `${title.textContent} (click to open)`;
  });
})();
