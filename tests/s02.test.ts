import { endTurnBehaviours } from './behaviours/end-turn.ts';
import { jobBehaviours } from './behaviours/jobs.ts';
import { loopBehaviours } from './behaviours/loop.ts';
import { toolBehaviours } from './behaviours/tools.ts';

loopBehaviours('s02', { offlineCommands: ['run', 'read', 'list', 'search', 'write', 'edit', 'history'] });
toolBehaviours('s02');

jobBehaviours('s02', { ctrlC: 'exits' });
endTurnBehaviours('s02');
