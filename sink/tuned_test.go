package sink

// newTuned makes and starts a sink of cfg as New does, with the
// experiments exp and, with backoff, the adaptive polling that Config
// does not offer: how the package's tests and benchmarks measure the
// alternatives (see experiments).
func newTuned[T any](cfg Config[T], action Action[T], exp experiments, backoff bool) (*Sink[T], error) {
	st, err := cfg.settle(action)
	if err != nil {
		return nil, err
	}
	st.exp = exp
	if backoff {
		st.idle = idleBackoff
	}
	s, err := buildSettled(st, action)
	if err != nil {
		return nil, err
	}
	s.start()
	return s, nil
}
