package natssink_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/natssink/embedded"
)

// Every goroutine the tests start, theirs and those of nats.go and
// nats-server, must be gone when the tests end: each test stops its
// sinks, closes its connections and shuts its servers down. The folder
// of the nats-server binary that the cluster test builds is removed.
func TestMain(m *testing.M) {
	removeBinDir := makeBinDir()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		removeBinDir()
		os.Exit(code)
	}))
}

// event is what the tests push: a producer and its sequence number, and
// a body that brings it to about 195 bytes.
type event struct {
	Producer int
	Seq      int
}

// body pads an encoded event to about 195 bytes, the size of a small log
// or telemetry event.
const body = `"msg":"request served","method":"GET","path":"/api/v1/items","status":200,"bytes":5120,"took_us":812,"host":"web-1","region":"eu-west","trace":"4bf92f3577b34da6a3ce929d0e0e4736"`

func encodeEvent(dst []byte, e event) ([]byte, error) {
	dst = append(dst, `{"p":`...)
	dst = strconv.AppendInt(dst, int64(e.Producer), 10)
	dst = append(dst, `,"s":`...)
	dst = strconv.AppendInt(dst, int64(e.Seq), 10)
	dst = append(dst, ',')
	dst = append(dst, body...)
	return append(dst, '}'), nil
}

// decodeEvent reads back what encodeEvent wrote.
func decodeEvent(p []byte) (event, error) {
	var e event
	_, err := fmt.Sscanf(string(p), `{"p":%d,"s":%d,`, &e.Producer, &e.Seq)
	return e, err
}

// embeddedServer starts an embedded server for one test.
func embeddedServer(t testing.TB) *embedded.Server {
	t.Helper()
	srv, err := embedded.Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	return srv
}

// stream creates a memory stream capturing subjects.
func stream(t testing.TB, js jetstream.JetStream, name string, subjects ...string) jetstream.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: name, Subjects: subjects, Storage: jetstream.MemoryStorage,
	})
	require.NoError(t, err)
	return st
}

// stored is one message read back from a stream.
type stored struct {
	Subject string
	MsgID   string
	Event   event
}

// readAll reads every message of the stream, in order, through an
// ordered consumer. It retries the API calls that fail while a cluster
// elects a leader.
func readAll(t testing.TB, st jetstream.Stream) []stored {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var info *jetstream.StreamInfo
	var cons jetstream.Consumer
	retry(t, ctx, "the stream's info and an ordered consumer", func() (err error) {
		if info, err = st.Info(ctx); err != nil {
			return err
		}
		cons, err = st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
		return err
	})
	want := int(info.State.Msgs)
	out := make([]stored, 0, want)
	for len(out) < want {
		require.NoError(t, ctx.Err(), "read %d of %d messages", len(out), want)
		batch, err := cons.Fetch(min(want-len(out), 2000), jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			continue // the ordered consumer recreates itself
		}
		for m := range batch.Messages() {
			e, err := decodeEvent(m.Data())
			require.NoError(t, err, "%q", m.Data())
			out = append(out, stored{Subject: m.Subject(), MsgID: m.Headers().Get("Nats-Msg-Id"), Event: e})
		}
	}
	return out
}

// retry calls f every 50 ms until it returns nil or ctx ends.
func retry(t testing.TB, ctx context.Context, what string, f func() error) {
	t.Helper()
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v (last error: %v)", what, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
