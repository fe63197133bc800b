package engines

// PoolCounts tells how many prepared sandboxes the launcher holds ready and
// how many it is making, over all engines.
func (l *Launcher) PoolCounts() (ready, making int) {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	for _, sbs := range l.pool.ready {
		ready += len(sbs)
	}
	for _, n := range l.pool.making {
		making += n
	}
	return ready, making
}
