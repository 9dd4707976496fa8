module github.com/hotpathhq/hotpath

go 1.26.0

// The toolchain this module is built and tested with: the current 1.26
// patch release. Users of the http.Handler API need Go 1.26.9 or 1.27.2
// at least for net/http's security fixes of 2026-10-08 (README, "Go
// versions").
toolchain go1.26.11

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	golang.org/x/net v0.61.0
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da
	golang.org/x/sys v0.49.0
	golang.org/x/tools v0.52.0
)

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
