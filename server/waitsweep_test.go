package server

// sweepMembers returns how many records of waits are on s's sweep lists
// (waitsweep.go): HTTP/1.1 working states and HTTP/2 connections.
func sweepMembers(s *Server) int {
	n := 0
	for i := range s.grace.shards {
		sh := &s.grace.shards[i]
		sh.mu.Lock()
		n += len(sh.waits)
		sh.mu.Unlock()
	}
	return n
}
