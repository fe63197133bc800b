package tournament

import "time"

// SetStart changes how long a placement keeps a game on its CPU.
func SetStart(a *Affinity, plies int, d time.Duration) { a.startPlies, a.startTime = plies, d }
