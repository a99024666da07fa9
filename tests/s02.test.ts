import { loopBehaviours } from './behaviours/loop.ts';
import { toolBehaviours } from './behaviours/tools.ts';

loopBehaviours('s02', { offlineCommands: ['run', 'read', 'list', 'search', 'write', 'edit', 'history'], tooLongPrompt: true });
toolBehaviours('s02');
