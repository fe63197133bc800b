package web

// Viewers returns how many viewers the hub counts as connected.
func Viewers(h *Hub) int64 { return h.viewers.Load() }
