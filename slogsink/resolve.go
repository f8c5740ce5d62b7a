package slogsink

import "log/slog"

// needsResolve reports whether any attribute of r, or of a group in it, is
// a slog.LogValuer. It allocates nothing.
func needsResolve(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = hasLogValuer(a.Value)
		return !found
	})
	return found
}

func hasLogValuer(v slog.Value) bool {
	switch v.Kind() {
	case slog.KindLogValuer:
		return true
	case slog.KindGroup:
		for _, a := range v.Group() {
			if hasLogValuer(a.Value) {
				return true
			}
		}
	}
	return false
}

// resolved returns a copy of r, sharing nothing with it, whose LogValuer
// values are resolved, also inside groups.
func resolved(r slog.Record) slog.Record {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(resolveAttr(a))
		return true
	})
	return out
}

// resolveAttr resolves a's value, and the values in it when it is a group,
// as slog's own handlers do when they format it.
func resolveAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup && hasLogValuer(a.Value) {
		g := a.Value.Group()
		as := make([]slog.Attr, len(g))
		for i, m := range g {
			as[i] = resolveAttr(m)
		}
		a.Value = slog.GroupValue(as...)
	}
	return a
}
