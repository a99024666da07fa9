import { loopBehaviours } from './behaviours/loop.ts';

loopBehaviours('s01', {
  offlineCommands: ['run', 'read', 'list', 'search', 'write', 'history'],
  ctrlCUnderTsx: true,
  plumbing: true,
});
