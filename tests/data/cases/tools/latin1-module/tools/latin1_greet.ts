// A module saved as Latin-1 (an e with an acute accent as one byte, 0xe9, below): it
// cannot be read as UTF-8, so none of its tools are.
// expect: 5:7 manifest io not UTF-8: byte 0xe9 cannot be decoded
// expect: 1:1 infra typegate not compiled: not UTF-8: byte 0xe9 cannot be decoded
// café
export const latin1_greet = 1;
