package mpmc_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
)

// A capacity that no allocation can give panics naming it (it used to panic
// inside makeslice), and the zero ends panic naming the mistake (they used
// to dereference a nil pointer).
func TestMisusePanicsNameTheMistake(t *testing.T) {
	for _, c := range []int{math.MaxInt, math.MaxInt / 2} {
		msg := panicOf(func() { mpmc.Bounded[int64](c) })
		require.Contains(t, msg, fmt.Sprintf("mpmc: capacity %d is too large to allocate: 16-byte slots need more than", c))
	}
	require.Contains(t, panicOf(func() { mpmc.Bounded[[1 << 20]byte](1 << 28) }), "too large to allocate")

	// Each case has zero ends of its own: a Release marks its end released.
	ctx := context.Background()
	for name, f := range map[string]func(){
		"Sender.Send":          func() { var tx mpmc.Sender[int]; _ = tx.Send(ctx, 1) },
		"Sender.TrySend":       func() { var tx mpmc.Sender[int]; _ = tx.TrySend(1) },
		"Sender.Len":           func() { var tx mpmc.Sender[int]; tx.Len() },
		"Sender.Release":       func() { var tx mpmc.Sender[int]; tx.Release() },
		"Receiver.Recv":        func() { var rx mpmc.Receiver[int]; _, _ = rx.Recv(ctx) },
		"Receiver.TryRecv":     func() { var rx mpmc.Receiver[int]; _, _ = rx.TryRecv() },
		"Receiver.Clone":       func() { var rx mpmc.Receiver[int]; rx.Clone() },
		"Receiver.Release":     func() { var rx mpmc.Receiver[int]; rx.Release() },
		"WeakSender.Upgrade":   func() { var wtx mpmc.WeakSender[int]; wtx.Upgrade() },
		"WeakReceiver.Upgrade": func() { var wrx mpmc.WeakReceiver[int]; wrx.Upgrade() },
	} {
		end := name[:len(name)-len(name[indexDot(name):])]
		require.PanicsWithValue(t, "mpmc: zero "+end+" used: ends come from Bounded, BoundedOn or Unbounded", f, name)
	}
}

func indexDot(s string) int {
	for i := range s {
		if s[i] == '.' {
			return i
		}
	}
	return len(s)
}

// panicOf returns the panic value of f as a string, or "" if it returns.
func panicOf(f func()) (msg string) {
	defer func() { msg = fmt.Sprint(recover()) }()
	f()
	return ""
}
