package natssink

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Connect connects to the NATS server or cluster at url (one URL, or a
// comma-separated list of a cluster's servers) and returns the connection
// and its JetStream context, ready for [New]. It sets options that suit a
// sink, before opts (which may override them):
//
//   - nats.MaxReconnects(-1): the client keeps reconnecting, to any server
//     of the cluster, for as long as it lives; meanwhile publishes wait in
//     the client's reconnect buffer (8 MiB by default), and the sink retries
//     or counts the values whose acks do not come.
//   - nats.ReconnectWait(250 ms), nats.Timeout(5 s).
//
// nats.go's default handler of asynchronous errors (a slow consumer, a
// publish permission denied) prints them to standard error; pass
// nats.ErrorHandler in opts to send them elsewhere.
//
// The embedded server of the package embedded is the same call with its
// URL: moving to a cluster changes only url.
func Connect(url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream, error) {
	all := append([]nats.Option{
		nats.Name("natssink"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(5 * time.Second),
	}, opts...)
	nc, err := nats.Connect(url, all...)
	if err != nil {
		return nil, nil, fmt.Errorf("natssink: connect to %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("natssink: JetStream on %s: %w", url, err)
	}
	return nc, js, nil
}
