package integration

// hostileMain runs the test binary as a hostile server when re-executed as
// one; it reports whether it did.
func hostileMain() bool { return false }
