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
