package web

// Viewers returns how many viewers the hub counts as connected.
func Viewers(l *Live) int64 { return l.Hub.viewers.Load() }
