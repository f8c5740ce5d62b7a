//go:build zenq && (mips || mips64 || ppc64 || s390x)

package zenq

// bigEndian is true: the byte at the lowest address of a word is its most
// significant byte. This branch is compiled and vetted for these ports but
// has not been run; the tests that would check it run on little-endian
// machines only.
const bigEndian = true
