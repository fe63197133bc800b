package protocol

// SetPollWait sets how long a pinned reader's poll(2) waits, and returns a
// function that puts it back.
func SetPollWait(ms int) (undo func()) {
	old := pollWait
	pollWait = ms
	return func() { pollWait = old }
}
