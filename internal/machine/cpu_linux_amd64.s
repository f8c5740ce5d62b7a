#include "textflag.h"

// func CPU() uint32
// RDPID reads IA32_TSC_AUX, where Linux keeps (node << 12) | cpu.
TEXT ·CPU(SB), NOSPLIT|NOFRAME, $0-4
	RDPID AX
	ANDL $0xfff, AX
	MOVL AX, ret+0(FP)
	RET

// func hasRDPID() bool
// CPUID leaf 7, subleaf 0: ECX bit 22 is RDPID. Leaf 0 gives the highest
// leaf the processor answers.
TEXT ·hasRDPID(SB), NOSPLIT, $0-1
	MOVL $0, AX
	MOVL $0, CX
	CPUID
	CMPL AX, $7
	JLT  no
	MOVL $7, AX
	MOVL $0, CX
	CPUID
	SHRL $22, CX
	ANDL $1, CX
	MOVB CX, ret+0(FP)
	RET
no:
	MOVB $0, ret+0(FP)
	RET
