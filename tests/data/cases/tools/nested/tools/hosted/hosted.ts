// Compiled with its own tsconfig: `noUnusedLocals` is its setting, not the trailmap's.
// expect: 4:7 tool TS6133 'unused' is declared but its value is never read.
export const hosted = 1;
const unused = 2;
