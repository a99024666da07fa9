import { loopBehaviours } from './behaviours/loop.ts';
import { toolBehaviours } from './behaviours/tools.ts';

loopBehaviours('s02', { offlineCommands: ['run', 'read', 'list', 'search', 'write', 'edit', 'history'], tooLongPrompt: true });
// s02's stages (tests/grade-s02.test.ts) check dispatch errors, write_file, the ambiguous edit and
// the order of writes on s02; s06, which runs these tool tests too, keeps those.
toolBehaviours('s02', { gradedByStages: true });
