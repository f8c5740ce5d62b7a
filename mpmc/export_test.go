package mpmc

import (
	"context"
	"sync/atomic"
)

// WaitingReceivers returns the number of receivers queued on r's channel
// and not yet notified. Tests poll it to know that a goroutine has started
// to wait, instead of sleeping.
func WaitingReceivers[T any](r *Receiver[T]) int {
	return int(atomic.LoadUint64(&r.ch().recvq.waiting) &^ armed)
}

// WaitingSenders returns the number of senders queued on s's channel and
// not yet notified.
func WaitingSenders[T any](s *Sender[T]) int {
	return int(atomic.LoadUint64(&s.ch().sendq.waiting) &^ armed)
}

// SetHooks installs functions that a waiting Send (send true) or Recv
// (send false) of s's channel calls with its ctx: beforeBlock once it is
// queued and its retry failed, just before it blocks; afterWake once it
// has received a wake-up, just before it retries. A hook that blocks
// holds the goroutine at that point, which is how the tests stage the
// races that decide whether a wake-up is lost. Install hooks before any
// goroutine waits on the channel.
func SetHooks[T any](s *Sender[T], beforeBlock, afterWake func(ctx context.Context, send bool)) {
	s.ch().hooks = &testHooks{beforeBlock: beforeBlock, afterWake: afterWake}
}

// SetLeakCheck turns the MPMCDEBUG=leaks reports on or off for the ends
// created from now on, with report called for each end freed without a
// Release. It returns a function that restores the previous settings.
func SetLeakCheck(on bool, report func(end string)) (restore func()) {
	oldOn, oldReport := leakCheck, reportLeak
	leakCheck, reportLeak = on, report
	return func() { leakCheck, reportLeak = oldOn, oldReport }
}
