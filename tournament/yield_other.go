//go:build !linux

package tournament

// osYield does nothing where sched_yield(2) is not known to help.
func osYield() {}
