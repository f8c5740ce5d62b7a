// Package doclinks holds the test that keeps the user documentation of the
// public packages (the doc comments that go doc shows: the package's and
// those of its exported identifiers, their fields and methods included)
// free of links that lead nowhere and of names a user cannot see: every
// [Name] link must resolve, as go/doc's parser resolves it, and no doc may
// name an unexported identifier of those packages. It has no API.
package doclinks
