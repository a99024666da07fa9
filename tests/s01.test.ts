import { loopBehaviours } from './behaviours/loop.ts';

loopBehaviours('s01');
