import { afterAll } from 'vitest';
import { cleanupTemp } from './run-chapter.ts';

afterAll(() => cleanupTemp());
