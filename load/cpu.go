package load

import "time"

// cpuUsage is CPU time used by the generator's process.
type cpuUsage struct{ user, sys time.Duration }

func (a cpuUsage) sub(b cpuUsage) cpuUsage { return cpuUsage{a.user - b.user, a.sys - b.sys} }
