//go:build race

package server

// raceEnabled: the race detector makes sync.Pool drop items at random,
// so allocation counts are only exact without it (.ci/run runs the
// allocation tests a second time without -race).
const raceEnabled = true
