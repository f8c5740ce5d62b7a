//go:build zenq && !(mips || mips64 || ppc64 || s390x)

package zenq

// bigEndian is false: the byte at the lowest address of a word is its least
// significant byte (amd64, arm64, 386, arm, riscv64, loong64, ppc64le, ...).
const bigEndian = false
