/** The fairness bench's two ways a backlog begins (fairness.ts), apart so the CLI can check --modes without loading the bench. */
export type Mode = 'restart' | 'flood';
export const MODES: readonly Mode[] = ['restart', 'flood'];
