//go:build race

package load

// raceEnabled: under the race detector the big runs of the tests are cut
// down (the detector slows the engines about tenfold).
const raceEnabled = true
