/**
 * The offline demo model's own rules (shared/offline-model.ts), called directly: what it says back
 * is what a reader without a key sees.
 */
import { expect, it } from 'vitest';
import { offlineRespond } from '../shared/offline-model.ts';

it('shows a tool call whose input it cuts with the cut marked, never as if the cut were a value', () => {
  const input = { file_path: 'notes.txt', old_string: 'hello there', new_string: 'goodbye and thanks for all' };
  const body = {
    tools: [{ name: 'edit_file' }],
    messages: [
      { role: 'user', content: 'edit notes.txt: hello there => goodbye and thanks for all' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'edit_file', input }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Edited notes.txt' }] },
    ],
  };
  const reply = offlineRespond(body) as { content: { text: string }[] };
  const shown = reply.content[0].text.split('\n')[0];
  expect(shown, 'the first 60 characters of the input, then an ellipsis').toBe(
    `Result of edit_file(${JSON.stringify(input).slice(0, 60)}…):`,
  );
});
