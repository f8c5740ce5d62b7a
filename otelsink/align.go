package otelsink

import "unsafe"

// Every 64-bit field that the processors use through sync/atomic's
// functions must be 8-byte aligned, which 32-bit platforms (386, arm) do
// not give a uint64 by itself: a misaligned one panics there. The
// processors are allocated, so their first word is aligned; these
// constants, each an index that is out of range unless its field's offset
// is a multiple of 8, make a build for such a platform fail instead. (The
// layout of core does not depend on T.)
var (
	_ = [1]struct{}{}[unsafe.Offsetof((*SpanProcessor)(nil).c)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*LogProcessor)(nil).c)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*core[int])(nil).exported)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*core[int])(nil).failed)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*core[int])(nil).exportErrors)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*core[int])(nil).shutdownErrors)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*core[int])(nil).errorsReported)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*core[int])(nil).fullAtClose)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*core[int])(nil).exporterPanics)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*core[int])(nil).faultsReported)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*core[int])(nil).lastFaultReport)%8]
	_ = [1]struct{}{}[unsafe.Offsetof((*observed[int])(nil).closedDrops)%8]
)
