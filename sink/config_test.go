package sink_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/sink"
)

func nop[T any]() sink.Action[T] {
	return sink.ActionFunc[T](func(context.Context, []T) {})
}

// Port of rejects_zero_idle_sleep: zero means "default" in Go, so the
// invalid value is a negative one.
func TestNewRejectsNegativeIdleSleep(t *testing.T) {
	_, err := sink.New(sink.Config[ev]{IdleSleep: -time.Millisecond}, nop[ev]())
	require.ErrorIs(t, err, sink.ErrInvalidConfig)
	require.ErrorContains(t, err, "IdleSleep = -1ms")
}

// Port of rejects_invalid_fields, and more: every invalid field is reported
// in one error that names the field and the value.
func TestNewRejectsInvalidFields(t *testing.T) {
	cases := []struct {
		name string
		cfg  sink.Config[ev]
		want string
	}{
		{"negative shards", sink.Config[ev]{Shards: -1}, "Shards = -1"},
		{"negative ring capacity", sink.Config[ev]{RingCapacity: -8}, "RingCapacity = -8"},
		{"negative batch size", sink.Config[ev]{BatchSize: -2}, "BatchSize = -2"},
		{"negative overload interval", sink.Config[ev]{OverloadInterval: -time.Second}, "OverloadInterval = -1s"},
		{"unknown idle mode", sink.Config[ev]{Idle: sink.IdleMode(42)}, "Idle = IdleMode(42)"},
		{"the unoffered idle mode", sink.Config[ev]{Idle: sink.IdleMode(2)}, "Idle = backoff"},
		{"negative idle sleep", sink.Config[ev]{IdleSleep: -1}, "IdleSleep = -1ns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := sink.New(c.cfg, nop[ev]())
			require.Nil(t, s)
			require.ErrorIs(t, err, sink.ErrInvalidConfig)
			require.ErrorContains(t, err, c.want)
		})
	}

	t.Run("all invalid fields are reported together", func(t *testing.T) {
		_, err := sink.New(sink.Config[ev]{Shards: -1, RingCapacity: -2, BatchSize: -3, IdleSleep: -5}, nil)
		require.ErrorIs(t, err, sink.ErrInvalidConfig)
		msg := err.Error()
		for _, want := range []string{"action = nil", "Shards = -1", "RingCapacity = -2", "BatchSize = -3", "IdleSleep = -5ns"} {
			require.Contains(t, msg, want)
		}
		require.Len(t, strings.Split(msg, "\n"), 5, "one line per invalid field")
	})
}

// Port of try_spawn_rejects_invalid_config.
func TestNewRejectsInvalidConfig(t *testing.T) {
	s, err := sink.New(sink.Config[ev]{Shards: -1}, nop[ev]())
	require.Nil(t, s)
	require.ErrorIs(t, err, sink.ErrInvalidConfig)
}

func TestNewRejectsNilActions(t *testing.T) {
	_, err := sink.New(sink.Config[ev]{}, nil)
	require.ErrorIs(t, err, sink.ErrInvalidConfig)
	require.ErrorContains(t, err, "action = nil")

	_, err = sink.New(sink.Config[ev]{}, sink.ActionFunc[ev](nil))
	require.ErrorIs(t, err, sink.ErrInvalidConfig)
	require.ErrorContains(t, err, "action = ActionFunc(nil)")
}

func TestNewRejectsBadRingFactories(t *testing.T) {
	t.Run("a nil ring", func(t *testing.T) {
		_, err := sink.New(sink.Config[ev]{Ring: func(int) ring.Ring[ev] { return nil }}, nop[ev]())
		require.ErrorIs(t, err, sink.ErrInvalidConfig)
		require.ErrorContains(t, err, "returned a nil ring for capacity 8192")
	})
	t.Run("a ring of the wrong capacity", func(t *testing.T) {
		_, err := sink.New(sink.Config[ev]{
			RingCapacity: 100,
			Ring:         func(c int) ring.Ring[ev] { return mutex.New[ev](c + 1) },
		}, nop[ev]())
		require.ErrorIs(t, err, sink.ErrInvalidConfig)
		require.ErrorContains(t, err, "returned a ring of capacity 101 for capacity 100")
	})
}

func TestMustNewPanicsWithTheError(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		require.True(t, ok, "MustNew panicked with %v, not an error", r)
		require.ErrorIs(t, err, sink.ErrInvalidConfig)
	}()
	sink.MustNew(sink.Config[ev]{BatchSize: -1}, nop[ev]())
	t.Fatal("MustNew did not panic")
}

func TestZeroConfigUsesTheDefaults(t *testing.T) {
	s := newSink(t, sink.Config[ev]{}, nop[ev]())
	st := s.Stats()
	require.Equal(t, "sink", st.Name)
	require.Equal(t, "sink", s.Name())
	require.GreaterOrEqual(t, st.Shards, 1)
	require.LessOrEqual(t, st.Shards, sink.MaxStackShards)
	require.Equal(t, st.Shards, s.Shards())
}

func TestIdleModeString(t *testing.T) {
	require.Equal(t, "wake", sink.IdleWake.String())
	require.Equal(t, "poll", sink.IdlePoll.String())
	require.Equal(t, "IdleMode(9)", sink.IdleMode(9).String())
}

func TestErrorsAreDistinct(t *testing.T) {
	require.False(t, errors.Is(sink.ErrShutdown, sink.ErrInvalidConfig))
}

func TestIdleModeReadsAndWritesItsNames(t *testing.T) {
	for _, m := range []sink.IdleMode{sink.IdleWake, sink.IdlePoll} {
		text, err := m.MarshalText()
		require.NoError(t, err)
		var back sink.IdleMode = 7
		require.NoError(t, back.UnmarshalText(text))
		require.Equal(t, m, back, "%s", text)
	}
	m := sink.IdlePoll
	require.EqualError(t, m.UnmarshalText([]byte("spin")), `sink: unknown idle mode "spin" (want wake or poll)`)
	require.Equal(t, sink.IdlePoll, m, "a failed UnmarshalText leaves the mode unchanged")
}

// newOrPanic calls New, returns the panic that escapes it, if any, so that
// a test can fail on it instead of crashing, and shuts down a sink that New
// should not have made.
func newOrPanic(t *testing.T, cfg sink.Config[ev]) (made bool, panicked any, err error) {
	defer func() { panicked = recover() }()
	s, err := sink.New(cfg, nop[ev]())
	if s != nil {
		require.NoError(t, s.Shutdown(context.Background()))
	}
	return s != nil, nil, err
}

func TestNewRefusesMisbehavingRingFactories(t *testing.T) {
	cases := []struct {
		name    string
		factory ring.Factory[ev]
		want    string
	}{
		{"a factory that panics", func(int) ring.Ring[ev] { panic("out of slots") },
			"panicked for capacity 16: out of slots"},
		{"a typed nil ring", func(int) ring.Ring[ev] { return (*mutex.Ring[ev])(nil) },
			"panicked for capacity 16"},
		{"a nil ring", func(int) ring.Ring[ev] { return nil },
			"returned a nil ring for capacity 16"},
		{"a ring of the wrong capacity", func(c int) ring.Ring[ev] { return mutex.New[ev](c - 1) },
			"returned a ring of capacity 15 for capacity 16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			made, p, err := newOrPanic(t, sink.Config[ev]{Shards: 2, RingCapacity: 16, Ring: c.factory})
			require.Nil(t, p, "New let the factory's panic escape")
			require.False(t, made)
			require.ErrorIs(t, err, sink.ErrInvalidConfig)
			require.ErrorContains(t, err, "Ring = ")
			require.ErrorContains(t, err, "TestNewRefusesMisbehavingRingFactories", "the error names the factory function")
			require.ErrorContains(t, err, c.want)
		})
	}
}

func TestNewRefusesSizesAboveTheBounds(t *testing.T) {
	for _, c := range []struct {
		cfg  sink.Config[ev]
		want string
	}{
		{sink.Config[ev]{Shards: sink.MaxShards + 1}, fmt.Sprintf("Shards = %d", sink.MaxShards+1)},
		{sink.Config[ev]{RingCapacity: sink.MaxRingCapacity + 1}, fmt.Sprintf("RingCapacity = %d", sink.MaxRingCapacity+1)},
		{sink.Config[ev]{Shards: math.MaxInt}, fmt.Sprintf("Shards = %d", math.MaxInt)},
		{sink.Config[ev]{RingCapacity: math.MaxInt}, fmt.Sprintf("RingCapacity = %d", math.MaxInt)},
	} {
		t.Run(c.want, func(t *testing.T) {
			made, p, err := newOrPanic(t, c.cfg)
			require.Nil(t, p)
			require.False(t, made)
			require.ErrorIs(t, err, sink.ErrInvalidConfig)
			require.ErrorContains(t, err, c.want)
			require.ErrorContains(t, err, "at most")
		})
	}
	// The bounds themselves are accepted: the most shards, and the largest
	// capacity (on a ring that allocates no slots).
	for _, cfg := range []sink.Config[ev]{
		{Shards: sink.MaxShards, RingCapacity: 2},
		{Shards: 1, RingCapacity: sink.MaxRingCapacity, Ring: func(c int) ring.Ring[ev] { return emptyRing{c} }},
	} {
		s := newSink(t, cfg, nop[ev]())
		require.Equal(t, cfg.Shards, s.Shards())
		require.Equal(t, cfg.RingCapacity, s.Stats().RingCapacity)
	}
}

// emptyRing is a ring that holds nothing and reports the capacity it was
// made with.
type emptyRing struct{ c int }

func (emptyRing) TryPush(ev) bool    { return false }
func (emptyRing) TryPop() (ev, bool) { return ev{}, false }
func (emptyRing) Len() int           { return 0 }
func (r emptyRing) Cap() int         { return r.c }
