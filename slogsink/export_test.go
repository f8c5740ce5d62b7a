package slogsink

import "time"

// MaxDrainTurn returns the longest Drain call of h's workers so far.
func MaxDrainTurn(h *Handler) time.Duration { return h.c.w.MaxDrainTurn() }
