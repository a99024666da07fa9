import { loopBehaviours } from './behaviours/loop.ts';

loopBehaviours('s01', {
  offlineCommands: ['run', 'read', 'list', 'search', 'write', 'history'],
  ctrlCUnderTsx: true,
  plumbing: true,
  tooLongPrompt: true,
});
// The bash tool's cut between characters (never inside an emoji) is checked in every chapter, in
// the -p run of four tool rounds (behaviours/loop.ts).
