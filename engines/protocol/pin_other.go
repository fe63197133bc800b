//go:build !linux

package protocol

import "errors"

// PinTo is supported on Linux only.
func (b *Base) PinTo(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	return errors.New("pin a seat: CPU affinity is supported on Linux only")
}

// pinState is empty where seats cannot be pinned.
type pinState struct{}

// Unpin does nothing where seats cannot be pinned.
func (b *Base) Unpin() {}
