package sink

// The package's tests check the batch parity at every turn (see
// worker.beginRound).
func init() { parityChecked = true }
