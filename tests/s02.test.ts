import { loopBehaviours } from './behaviours/loop.ts';
import { toolBehaviours } from './behaviours/tools.ts';

loopBehaviours('s02');
toolBehaviours('s02');
