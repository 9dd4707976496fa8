// Package tcpcork sends big file bodies corked (Linux's TCP_CORK), as
// nginx's tcp_nopush does with sendfile: the head leaves with the file's
// first bytes, and the file in full segments. Without it TCP_NODELAY,
// Go's default, pushes a segment at every internal step of sendfile.
// The server's file responses use it.
//
// Only big files are corked: measured on a 2-core VM's loopback, both
// cores' busy time per request (wrk -c 1 and -c 10, hotpath serve
// --files, one run each), corked against uncorked:
//
//	128 KiB, -c 10: 102 vs 77 µs, 0.69x the requests: worse
//	1 MiB, -c 10:   647 vs 551 µs, 0.92x the requests: worse
//	4 MiB:          -c 1 worse (0.76x the requests), -c 10 better (1.25x)
//	8 MiB:          5.6 vs 7.0 ms (-c 1), 5.8 vs 6.1 ms (-c 10); 1.32x and 1.23x the requests
//	16 MiB:         11.0 vs 13.1 ms (-c 1), 12.3 vs 13.6 ms (-c 10); 1.18x and 1.44x
//	1 GB, curl:     0.66 vs 0.89 CPU-s/GB, 2.26 vs 1.59 GB/s
//
// Writes from memory gain nothing from it (0.31 and 0.35 CPU-s/GB for
// 32 KiB writes, uncorked and corked), so only files are corked.
package tcpcork

import (
	"io"
	"os"
)

// MinBytes is the smallest file body sent corked (see the package doc).
const MinBytes = 8 << 20

// File reports whether a body of n bytes from src is one to cork: a
// regular file of MinBytes or more. A source that may trickle (a pipe, a
// socket) is not: corked, its bytes would wait for the kernel's 200 ms
// cork timer.
func File(src io.Reader, n int64) bool {
	f, ok := src.(*os.File)
	if !ok || n < MinBytes {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}
