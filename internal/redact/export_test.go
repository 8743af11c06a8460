package redact

// RedactAll is Text without its fast path, for the test that holds the
// two equal.
var RedactAll = redactAll

// WithStandInKey runs f with the stand-in key set to k, as another
// process (another bundle) would have drawn it.
func WithStandInKey(k []byte, f func()) {
	old := standInKey
	standInKey = func() []byte { return k }
	defer func() { standInKey = old }()
	f()
}
