package natssink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// onAck handles a message on the ack inbox: the stream's answer to one
// attempt (subject inbox.seq.slot.attempt), or the server's status when no
// stream answered. An answer for a value that is no longer in its slot (a
// late ack of an earlier attempt, after a later one settled it) changes
// nothing; so does a refusal of an attempt that a later one has replaced,
// whose own answer decides.
func (s *Sink[T]) onAck(subject, status string, data []byte) {
	seq, idx, attempt, ok := s.parseReply(subject)
	if !ok {
		return
	}
	sl := s.slots.get(int32(idx))
	if sl == nil {
		return
	}
	sl.mu.Lock()
	defer s.unlockSettled(sl, int32(idx))
	if sl.seq.Load() != seq {
		return
	}
	duplicate, err := ackResult(status, data)
	if err == nil {
		s.ack(sl, int32(idx), duplicate)
		return
	}
	if attempt != uint64(sl.attempts) || sl.backingOff {
		return
	}
	s.attemptFailed(sl, int32(idx), s.now(), err)
}

// parseReply reads seq, slot and attempt from an ack subject of this sink.
func (s *Sink[T]) parseReply(subject string) (seq, idx, attempt uint64, ok bool) {
	n := len(s.inbox)
	if len(subject) <= n+1 || subject[:n] != s.inbox || subject[n] != '.' {
		return 0, 0, 0, false
	}
	rest := subject[n+1:]
	var fields [3]uint64
	for i := range fields {
		v, k := uint64(0), 0
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' && k < 19 {
			v = v*10 + uint64(rest[k]-'0')
			k++
		}
		if k == 0 {
			return 0, 0, 0, false
		}
		fields[i] = v
		rest = rest[k:]
		if i < 2 {
			if len(rest) == 0 || rest[0] != '.' {
				return 0, 0, 0, false
			}
			rest = rest[1:]
		}
	}
	if len(rest) != 0 || fields[0] == 0 || fields[1] >= uint64(s.slots.n) {
		return 0, 0, 0, false
	}
	return fields[0], fields[1], fields[2], true
}

// The shapes of the stream's answers: nats-server writes a success as
// {"stream":"NAME","seq":N} (with ,"domain":"D" before seq, and
// ,"duplicate": true after it for a message it already held), and a
// refusal as {"error":{"code":C,"err_code":E,"description":"..."},...}.
var (
	ackPrefix       = []byte(`{"stream":`)
	duplicateMarker = []byte(`"duplicate"`)
)

// ackResult reads the answer to one publish: nil when the stream stored
// the value (duplicate when it already had it), else the reason.
// A success without the bytes "duplicate" is recognised without decoding,
// so it allocates nothing; any other answer is decoded (a stream or a
// domain named "duplicate" costs its acks a decoding, not their meaning).
func ackResult(status string, data []byte) (duplicate bool, err error) {
	if len(data) == 0 {
		if status == "503" {
			return false, jetstream.ErrNoStreamResponse
		}
		return false, fmt.Errorf("natssink: the server answered with status %q and no ack: %w", status, jetstream.ErrInvalidJSAck)
	}
	if bytes.HasPrefix(data, ackPrefix) && !bytes.Contains(data, duplicateMarker) {
		return false, nil // a success that is no duplicate: the common answer
	}
	var r struct {
		Error     *jetstream.APIError `json:"error"`
		Stream    string              `json:"stream"`
		Duplicate bool                `json:"duplicate"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return false, jetstream.ErrInvalidJSAck
	}
	switch {
	case r.Error != nil:
		return false, r.Error
	case r.Stream == "":
		return false, jetstream.ErrInvalidJSAck
	}
	return r.Duplicate, nil
}

// errCodeDuplicateInProcess is the JetStream error of a publish whose
// Nats-Msg-Id the stream is still storing from an earlier publish (409,
// "duplicate message id is in process"): a clustered stream's answer to a
// retry that overtakes the replication of the first attempt, which may
// yet be stored.
const errCodeDuplicateInProcess = 10158

// permanent reports whether a retry of a publish that failed with err
// cannot succeed: a subject, header or payload the server refuses, a
// connection that is closed or draining, or a refusal by the stream other
// than a timeout (408), too many requests (429: a stream catching up after
// an election refuses what exceeds its pending limit), an unavailability
// (5xx) or a duplicate in process (which the retry's own answer settles: a
// duplicate ack, or a store).
func permanent(err error) bool {
	for _, p := range [...]error{
		nats.ErrBadSubject, nats.ErrMaxPayload, nats.ErrHeadersNotSupported,
		nats.ErrBadHeaderMsg, nats.ErrConnectionClosed, nats.ErrConnectionDraining,
		ErrEncodePanicked,
	} {
		if errors.Is(err, p) {
			return true
		}
	}
	if api, ok := errors.AsType[*jetstream.APIError](err); ok {
		return api.Code != 408 && api.Code != 429 && api.Code < 500 && api.ErrorCode != errCodeDuplicateInProcess
	}
	return false
}
