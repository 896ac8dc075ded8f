// A module of the nested project above: its diagnostics are its own compile's, which did not run.
// expect: nothing
export const legacyCount: number = "not checked";
