// Package floor holds the test that keeps internal/ the floor of this
// repository: no package under internal/ depends on a package of the
// repository outside internal/ (sink, logsink, ...), so that those
// packages can import internal/ without a cycle and internal/ stays what
// everything else stands on. Test support that needs sink lives beside
// it (sink/sinktest). It has no API.
package floor
