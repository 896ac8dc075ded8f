// The script of the descriptor next to it.
// expect: nothing
export {};
